// A seeded random source whose output is the same on every platform: std::mt19937_64 (its
// sequence is fixed by the standard) with our own mappings to ranges, because the standard
// library's distributions differ between implementations.
#pragma once

#include <cstdint>
#include <random>

namespace mssql_cdc::sim {

class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  std::uint64_t Next() { return engine_(); }
  // Uniform in [lo, hi], both inclusive; lo <= hi.
  std::int64_t Uniform(std::int64_t lo, std::int64_t hi);
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  bool Chance(double probability) { return Unit() < probability; }

 private:
  std::mt19937_64 engine_;
};

}  // namespace mssql_cdc::sim
