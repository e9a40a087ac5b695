// SPDX-License-Identifier: GPL-2.0-only
// doctest main for the unit test binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
