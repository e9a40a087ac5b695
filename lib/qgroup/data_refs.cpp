// SPDX-License-Identifier: GPL-2.0-only
// External sort-merge of data extent references with lz4-compressed runs.
// A run is a sequence of chunks: [u32 raw bytes][u32 compressed bytes][lz4 data],
// each chunk holding whole 16-byte records (le64 bytenr, le32 num_bytes in
// 4 KiB units, le32 rootset: PackedDataRef).
#include "lib/qgroup/data_refs.h"

#include <lz4.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <queue>
#include <string>
#include <system_error>
#include <thread>

#include "lib/base/bytes.h"
#include "lib/format/le.h"

namespace fsctl::qgroup {
using format::load_le;
using format::store_le;

namespace {
constexpr std::size_t RECORD = 16;
constexpr u32 UNIT_SHIFT = 12;  // PackedDataRef::num_4k
constexpr std::size_t CHUNK_RECORDS = 1024;  // 16 KiB of records per chunk

void encode(const PackedDataRef& r, u8* p) {
  store_le<u64>(p, r.bytenr);
  store_le<u32>(p + 8, r.num_4k);
  store_le<u32>(p + 12, r.rootset);
}
PackedDataRef decode(const u8* p) { return {load_le<u64>(p), load_le<u32>(p + 8), load_le<u32>(p + 12)}; }

// Reads one run back chunk by chunk.
class RunReader {
 public:
  RunReader(std::FILE* f, long offset, u64 records) : f_(f), offset_(offset), left_(records) {}
  // Next record, or false at the end of the run.
  Result<bool> next(PackedDataRef& out) {
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
// Appends one run to the end of the file, chunk by chunk.
class RunWriter {
 public:
  explicit RunWriter(std::FILE* f) : f_(f), raw_(CHUNK_RECORDS * RECORD),
        comp_(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(CHUNK_RECORDS * RECORD)))) {}
  // Offset where the run starts. Errors: Errc::io.
  Result<long> start() {
    if (std::fseek(f_, 0, SEEK_END) != 0) return make_error(Errc::io, "seeking the qgroup spill file", errno);
    return std::ftell(f_);
  }
  Status add(const PackedDataRef& r) {
    encode(r, raw_.data() + n_ * RECORD);
    ++records_;
    if (++n_ == CHUNK_RECORDS) return flush();
    return {};
  }
  Status flush() {
    if (n_ == 0) return {};
    int c = LZ4_compress_default(as_chars(raw_.data()), comp_.data(), static_cast<int>(n_ * RECORD), static_cast<int>(comp_.size()));
    if (c <= 0) return make_error(Errc::io, "compressing the qgroup spill file");
    u8 hdr[8];
    store_le<u32>(hdr, static_cast<u32>(n_ * RECORD));
    store_le<u32>(hdr + 4, static_cast<u32>(c));
    // Readers of other runs move the stream between chunks (a merge pass
    // writes while it reads): append at the end every time.
    if (std::fseek(f_, 0, SEEK_END) != 0) return make_error(Errc::io, "seeking the qgroup spill file", errno);
    if (std::fwrite(hdr, 1, 8, f_) != 8 || std::fwrite(comp_.data(), 1, static_cast<std::size_t>(c), f_) != static_cast<std::size_t>(c))
      return make_error(Errc::io, "writing the qgroup spill file: " + std::string(std::strerror(errno)), errno);
    n_ = 0;
    return {};
  }
  [[nodiscard]] u64 records() const { return records_; }

 private:
  std::FILE* f_;
  std::vector<u8> raw_;
  std::vector<char> comp_;
  std::size_t n_ = 0;
  u64 records_ = 0;
};

}  // namespace

DataRefs::DataRefs(ctree::RootSets& sets, u64 budget_bytes)
    : sets_(sets), budget_bytes_(budget_bytes), max_records_(std::max<std::size_t>(1024, budget_bytes / sizeof(PackedDataRef))) {}

DataRefs::~DataRefs() {
  if (file_) std::fclose(file_);
}

Status DataRefs::add(const DataRef& r) {
  constexpr u64 UNIT = u64{1} << UNIT_SHIFT;
  if (r.num_bytes == 0 || r.num_bytes % UNIT != 0 || (r.num_bytes >> UNIT_SHIFT) > UINT32_MAX)
    return make_error(Errc::corrupt, "data extent " + std::to_string(r.bytenr) + ": disk_num_bytes " + std::to_string(r.num_bytes) +
                                         " is not a multiple of 4096 below 16 TiB (kernel tree-checker: aligned to the sectorsize)");
  // The buffer's capacity is the budget (growth by doubling could take twice).
  if (buf_.capacity() < max_records_) buf_.reserve(max_records_);
  buf_.push_back({r.bytenr, static_cast<u32>(r.num_bytes >> UNIT_SHIFT), r.rootset});
  if (buf_.size() >= max_records_) {
    sort_and_merge();
    // Merging may have freed enough room (many references to few extents).
    if (buf_.size() >= max_records_ / 2) FSCTL_TRY(spill());
  }
  return {};
}

namespace {

/// Sorts `v` by bytenr, on two threads when it is large: split at the median
/// (std::nth_element: everything left of it is <= it <= everything right),
/// then each half sorted on its own core. The sort was a quarter of `qgroup
/// verify`'s CPU time on 1.8 million references (bench/RESULTS.md,
/// profiles). Without a second thread (resource limits) it sorts inline.
void sort_by_bytenr(std::vector<PackedDataRef>& v) {
  auto by_bytenr = [](const PackedDataRef& a, const PackedDataRef& b) { return a.bytenr < b.bytenr; };
  constexpr std::size_t PARALLEL_MIN = std::size_t{1} << 16;
  if (v.size() < PARALLEL_MIN) {
    std::sort(v.begin(), v.end(), by_bytenr);
    return;
  }
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end(), by_bytenr);
  std::thread left;
  try {
    left = std::thread([&] { std::sort(v.begin(), mid, by_bytenr); });
  } catch (const std::system_error&) {
    std::sort(v.begin(), mid, by_bytenr);
  }
  std::sort(mid, v.end(), by_bytenr);
  if (left.joinable()) left.join();
}

}  // namespace

void DataRefs::sort_and_merge() {
  sort_by_bytenr(buf_);
  std::size_t out = 0;
  for (std::size_t i = 0; i < buf_.size();) {
    PackedDataRef m = buf_[i];
    std::size_t j = i + 1;
    while (j < buf_.size() && buf_[j].bytenr == m.bytenr) ++j;
    if (j > i + 1) {
      // One union of all (pairwise unions interned every intermediate set).
      set_ids_.clear();
      for (std::size_t k = i; k < j; ++k) set_ids_.push_back(buf_[k].rootset);
      m.rootset = sets_.unite_all(set_ids_);
    }
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
  RunWriter w(file_);
  FSCTL_TRY_ASSIGN(long start, w.start());
  for (const PackedDataRef& r : buf_) FSCTL_TRY(w.add(r));
  FSCTL_TRY(w.flush());
  runs_.push_back({start, buf_.size()});
  buf_.clear();
  ++spilled_;
  return {};
}

// Merges runs [first, last) in ascending bytenr, one record per extent with
// the union of its root sets. Each open run holds one chunk in memory.
Status DataRefs::merge_runs(std::size_t first, std::size_t last, const std::function<Status(const PackedDataRef&)>& out) {
  std::vector<RunReader> readers;
  for (std::size_t k = first; k < last; ++k) readers.emplace_back(file_, runs_[k].offset, runs_[k].records);
  using Item = std::pair<PackedDataRef, std::size_t>;
  auto cmp = [](const Item& a, const Item& b) { return a.first.bytenr > b.first.bytenr; };
  std::priority_queue<Item, std::vector<Item>, decltype(cmp)> heap(cmp);
  for (std::size_t i = 0; i < readers.size(); ++i) {
    PackedDataRef r{};
    FSCTL_TRY_ASSIGN(bool ok, readers[i].next(r));
    if (ok) heap.push({r, i});
  }
  bool have = false;
  PackedDataRef cur{};
  // The sets of cur's extent, united once when the next extent comes.
  auto finish = [&]() -> Status {
    if (set_ids_.size() > 1) cur.rootset = sets_.unite_all(set_ids_);
    return out(cur);
  };
  while (!heap.empty()) {
    auto [r, i] = heap.top();
    heap.pop();
    if (have && r.bytenr == cur.bytenr) {
      set_ids_.push_back(r.rootset);
    } else {
      if (have) FSCTL_TRY(finish());
      cur = r;
      set_ids_.assign({r.rootset});
      have = true;
    }
    PackedDataRef nx{};
    FSCTL_TRY_ASSIGN(bool ok, readers[i].next(nx));
    if (ok) heap.push({nx, i});
  }
  if (have) FSCTL_TRY(finish());
  return {};
}

Status DataRefs::for_each_extent(const std::function<void(u64, u64, u32)>& visit) {
  sort_and_merge();
  if (runs_.empty()) {
    for (auto& r : buf_) visit(r.bytenr, u64{r.num_4k} << UNIT_SHIFT, r.rootset);
    buf_.clear();
    return {};
  }
  if (!buf_.empty()) FSCTL_TRY(spill());
  // Open runs each hold a chunk (and its compressed twin): past the fan-in
  // the budget allows, the oldest runs are merged into one first, so the
  // merge stays within the budget however many runs were spilled.
  const std::size_t fan_in = std::max<std::size_t>(4, budget_bytes_ / (4 * CHUNK_RECORDS * RECORD));
  while (runs_.size() > fan_in) {
    RunWriter w(file_);
    FSCTL_TRY_ASSIGN(long start, w.start());
    FSCTL_TRY(merge_runs(0, fan_in, [&](const PackedDataRef& r) { return w.add(r); }));
    FSCTL_TRY(w.flush());
    runs_.erase(runs_.begin(), runs_.begin() + static_cast<std::ptrdiff_t>(fan_in));
    runs_.push_back({start, w.records()});
    ++merge_passes_;
  }
  return merge_runs(0, runs_.size(), [&](const PackedDataRef& r) -> Status {
    visit(r.bytenr, u64{r.num_4k} << UNIT_SHIFT, r.rootset);
    return {};
  });
}

}  // namespace fsctl::qgroup
