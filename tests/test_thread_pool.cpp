#include <atomic>
#include <stdexcept>
#include <vector>

#include "catch.hpp"
#include "prover/util/thread_pool.hpp"

TEST_CASE("parallel_for covers every index exactly once") {
  cuzk::ThreadPool pool(3);
  for (size_t n : {size_t(1), size_t(7), size_t(1000), size_t(12345)}) {
    std::vector<std::atomic<int>> hits(n);
    pool.parallel_for(n, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) hits[i]++;
    });
    for (size_t i = 0; i < n; ++i) REQUIRE(hits[i].load() == 1);
  }
}

TEST_CASE("parallel_for rethrows the first exception after all chunks finish") {
  cuzk::ThreadPool pool(2);
  std::atomic<int> ran{0};
  REQUIRE_THROWS_AS(pool.parallel_for(100, [&](size_t b, size_t) {
    ran++;
    if (b == 0) throw std::runtime_error("boom");
  }, 10), std::runtime_error);
  REQUIRE(ran.load() == 10);
}

TEST_CASE("nested parallel_for runs inline without deadlock") {
  cuzk::ThreadPool pool(2);
  std::atomic<long> sum{0};
  pool.parallel_for(8, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      pool.parallel_for(10, [&](size_t b2, size_t e2) { sum += long(e2 - b2); });
  });
  REQUIRE(sum.load() == 80);
}

TEST_CASE("submit returns results through futures") {
  cuzk::ThreadPool pool(2);
  auto f = pool.submit([] { return 42; });
  REQUIRE(f.get() == 42);
}
