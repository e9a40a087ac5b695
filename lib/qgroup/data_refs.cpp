// SPDX-License-Identifier: GPL-2.0-only
// External sort-merge of data extent references with lz4-compressed runs.
// A run is a sequence of chunks: [u32 raw bytes][u32 compressed bytes][lz4 data],
// each chunk holding whole 20-byte records (le64 bytenr, le64 num_bytes, le32 rootset).
#include "lib/qgroup/data_refs.h"

#include <lz4.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <queue>

#include "lib/base/bytes.h"
#include "lib/format/le.h"

namespace fsctl::qgroup {
using format::load_le;
using format::store_le;

namespace {
constexpr std::size_t RECORD = 20;
constexpr std::size_t CHUNK_RECORDS = 4096;

void encode(const DataRef& r, u8* p) {
  store_le<u64>(p, r.bytenr);
  store_le<u64>(p + 8, r.num_bytes);
  store_le<u32>(p + 16, r.rootset);
}
DataRef decode(const u8* p) { return {load_le<u64>(p), load_le<u64>(p + 8), load_le<u32>(p + 16)}; }

// Reads one run back chunk by chunk.
class RunReader {
 public:
  RunReader(std::FILE* f, long offset, u64 records) : f_(f), offset_(offset), left_(records) {}
  // Next record, or false at the end of the run.
  Result<bool> next(DataRef& out) {
    if (pos_ == chunk_.size()) {
      if (left_ == 0) return false;
      FSCTL_TRY(load_chunk());
    }
    out = decode(chunk_.data() + pos_);
    pos_ += RECORD;
    --left_;
    return true;
  }

 private:
  Status load_chunk() {
    u8 hdr[8];
    if (std::fseek(f_, offset_, SEEK_SET) != 0 || std::fread(hdr, 1, 8, f_) != 8)
      return make_error(Errc::io, "reading qgroup spill file: " + std::string(std::strerror(errno)), errno);
    u32 raw = load_le<u32>(hdr), comp = load_le<u32>(hdr + 4);
    if (raw % RECORD || raw == 0 || raw > CHUNK_RECORDS * RECORD) return make_error(Errc::corrupt, "qgroup spill file chunk is damaged");
    std::vector<char> in(comp);
    if (std::fread(in.data(), 1, comp, f_) != comp) return make_error(Errc::io, "short read of the qgroup spill file");
    chunk_.resize(raw);
    int n = LZ4_decompress_safe(in.data(), as_chars(chunk_.data()), static_cast<int>(comp), static_cast<int>(raw));
    if (n != static_cast<int>(raw)) return make_error(Errc::corrupt, "qgroup spill file chunk does not decompress");
    offset_ += 8 + static_cast<long>(comp);
    pos_ = 0;
    return {};
  }
  std::FILE* f_;
  long offset_;
  u64 left_;
  std::vector<u8> chunk_;
  std::size_t pos_ = 0;
};
}  // namespace

DataRefs::DataRefs(ctree::RootSets& sets, u64 budget_bytes)
    : sets_(sets), max_records_(std::max<std::size_t>(1024, budget_bytes / sizeof(DataRef))) {}

DataRefs::~DataRefs() {
  if (file_) std::fclose(file_);
}

Status DataRefs::add(const DataRef& r) {
  buf_.push_back(r);
  if (buf_.size() >= max_records_) {
    sort_and_merge();
    // Merging may have freed enough room (many references to few extents).
    if (buf_.size() >= max_records_ / 2) FSCTL_TRY(spill());
  }
  return {};
}

void DataRefs::sort_and_merge() {
  std::sort(buf_.begin(), buf_.end(), [](const DataRef& a, const DataRef& b) { return a.bytenr < b.bytenr; });
  std::size_t out = 0;
  for (std::size_t i = 0; i < buf_.size();) {
    DataRef m = buf_[i];
    std::size_t j = i + 1;
    for (; j < buf_.size() && buf_[j].bytenr == m.bytenr; ++j) m.rootset = sets_.unite(m.rootset, buf_[j].rootset);
    buf_[out++] = m;
    i = j;
  }
  buf_.resize(out);
}

Status DataRefs::spill() {
  if (!file_) {
    file_ = std::tmpfile();  // unlinked: nothing is left behind, even on a crash
    if (!file_) return make_error(Errc::io, "creating the qgroup spill file: " + std::string(std::strerror(errno)), errno);
  }
  if (std::fseek(file_, 0, SEEK_END) != 0) return make_error(Errc::io, "seeking the qgroup spill file", errno);
  long start = std::ftell(file_);
  std::vector<u8> raw(CHUNK_RECORDS * RECORD);
  std::vector<char> comp(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
  for (std::size_t i = 0; i < buf_.size(); i += CHUNK_RECORDS) {
    std::size_t n = std::min(CHUNK_RECORDS, buf_.size() - i);
    for (std::size_t k = 0; k < n; ++k) encode(buf_[i + k], raw.data() + k * RECORD);
    int c = LZ4_compress_default(as_chars(raw.data()), comp.data(), static_cast<int>(n * RECORD),
                                 static_cast<int>(comp.size()));
    if (c <= 0) return make_error(Errc::io, "compressing the qgroup spill file");
    u8 hdr[8];
    store_le<u32>(hdr, static_cast<u32>(n * RECORD));
    store_le<u32>(hdr + 4, static_cast<u32>(c));
    if (std::fwrite(hdr, 1, 8, file_) != 8 || std::fwrite(comp.data(), 1, static_cast<std::size_t>(c), file_) != static_cast<std::size_t>(c))
      return make_error(Errc::io, "writing the qgroup spill file: " + std::string(std::strerror(errno)), errno);
  }
  runs_.push_back({start, buf_.size()});
  buf_.clear();
  return {};
}

Status DataRefs::for_each_extent(const std::function<void(u64, u64, u32)>& visit) {
  sort_and_merge();
  if (runs_.empty()) {
    for (auto& r : buf_) visit(r.bytenr, r.num_bytes, r.rootset);
    buf_.clear();
    return {};
  }
  if (!buf_.empty()) FSCTL_TRY(spill());
  std::vector<RunReader> readers;
  for (auto& run : runs_) readers.emplace_back(file_, run.offset, run.records);
  using Item = std::pair<DataRef, std::size_t>;
  auto cmp = [](const Item& a, const Item& b) { return a.first.bytenr > b.first.bytenr; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    DataRef r{};
    FSCTL_TRY_ASSIGN(bool ok, readers[i].next(r));
    if (ok) heap.push({r, i});
  }
  bool have = false;
  DataRef cur{};
  while (!heap.empty()) {
    auto [r, i] = heap.top();
    heap.pop();
    if (have && r.bytenr == cur.bytenr) {
      cur.rootset = sets_.unite(cur.rootset, r.rootset);
    } else {
      if (have) visit(cur.bytenr, cur.num_bytes, cur.rootset);
      cur = r;
      have = true;
    }
    DataRef nx{};
    FSCTL_TRY_ASSIGN(bool ok, readers[i].next(nx));
    if (ok) heap.push({nx, i});
  }
  if (have) visit(cur.bytenr, cur.num_bytes, cur.rootset);
  return {};
}

}  // namespace fsctl::qgroup
