// Sliced synthesis: one circuit synthesized on several threads (docs/engine.md, "Sliced
// synthesis").
//
// A sliced circuit has a shared part and independent slices (the PoRep circuit's challenges):
//   Shared synthesize_shared(CS&) const;                     every input, and what slices name
//   size_t slices() const;
//   void synthesize_slice(CS&, const Shared&, size_t i) const; auxiliaries and constraints only
// Every slice adds the same counts, and its constraints name only its own variables and the
// shared ones. Then, from the circuit's exact counts, each slice's place is known before it runs:
//   rows:  [shared][slice 0][slice 1]...[slice S-1][input constraints]
//   aux:   [shared][slice 0][slice 1]...[slice S-1]
// so the slices run on any threads in any order and write straight to their places; the result
// is the serial synthesis's, value for value. A circuit that breaks the contract (a slice of
// other counts, a count that does not divide) is a std::logic_error, never a wrong assignment
// left unnoticed where it is checked (the cursors at each slice's end; the QAP pass also checks
// every variable a slice names).
//
// Two passes use it: the proving assignment (SlicedAssignment, written without the copies and
// zeroing of growing vectors) and the QAP's evaluation at tau for parameter generation
// (evaluate_qap_sliced: no matrices kept).
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "prover/r1cs/constraint_system.hpp"
#include "prover/r1cs/proving_assignment.hpp"
#include "prover/r1cs/shape.hpp"

namespace cuzk::synth {

// A place in the three sequences a synthesis fills: constraints (rows), inputs, auxiliaries.
struct SlicePosition {
  uint64_t row = 0, input = 0, aux = 0;
  bool operator==(const SlicePosition&) const = default;
};

// The cursors of one part of a sliced synthesis: [begin, end) of each sequence.
class SliceCursor {
 public:
  SliceCursor(SlicePosition begin, SlicePosition end, bool inputs) : at_(begin), end_(end), inputs_(inputs) {}
  const SlicePosition& at() const { return at_; }
  const SlicePosition& end() const { return end_; }
  uint64_t num_inputs() const { return at_.input; }

 protected:
  uint32_t next_aux() {
    if (at_.aux == end_.aux) overflow("auxiliary variables", end_.aux);
    return static_cast<uint32_t>(at_.aux++);
  }
  uint32_t next_input() {
    if (!inputs_) throw std::logic_error("sliced synthesis: a slice allocated an input (inputs belong to the shared part)");
    if (at_.input == end_.input) overflow("inputs", end_.input);
    return static_cast<uint32_t>(at_.input++);
  }
  uint64_t next_row() {
    if (at_.row == end_.row) overflow("constraints", end_.row);
    return at_.row++;
  }

 private:
  [[noreturn]] static void overflow(const char* what, uint64_t end) {
    throw std::logic_error("sliced synthesis: a part of the circuit has more " + std::string(what) +
                           " than its place (ending at " + std::to_string(end) +
                           "): the circuit's slices differ in size or its counts are wrong");
  }
  SlicePosition at_, end_;
  bool inputs_;
};

// Runs the shared part, then the slices on `threads` threads (at most one per slice; the caller
// is one of them), then the input constraints (input_i * 0 = 0, as synthesize_circuit appends
// them). make(begin, end, part, shared_end) gives the constraint system of one part: part = -1
// for the shared part, -2 for the input constraints, else the slice's index; shared_end is where
// the shared part ended (zero while it runs). Each part's finish() is called once it has filled
// its place exactly. The first error of any thread is rethrown here after every
// thread has stopped.
template <class Circuit, class MakeCs>
void synthesize_sliced(const Circuit& circuit, const r1cs::ShapeCounts& counts, unsigned threads, const MakeCs& make) {
  const SlicePosition end{counts.constraints, counts.inputs, counts.aux};
  if (counts.constraints < counts.inputs)
    throw std::logic_error("sliced synthesis: fewer constraints than inputs in the circuit's counts");
  auto head = make(SlicePosition{0, 1, 0}, end, int64_t(-1), SlicePosition{});
  const auto shared = circuit.synthesize_shared(head);
  const SlicePosition h = head.at();
  if (h.input != counts.inputs)
    throw std::logic_error("sliced synthesis: the shared part allocated " + std::to_string(h.input) + " of the " +
                           std::to_string(counts.inputs) + " inputs");
  head.finish();

  const uint64_t S = circuit.slices();
  const uint64_t rows = counts.constraints - counts.inputs - h.row, aux = counts.aux - h.aux;
  if (S == 0 ? (rows || aux) : (rows % S || aux % S))
    throw std::logic_error("sliced synthesis: " + std::to_string(rows) + " constraints and " + std::to_string(aux) +
                           " auxiliaries after the shared part do not split into " + std::to_string(S) +
                           " equal slices");
  const uint64_t rows_per = S ? rows / S : 0, aux_per = S ? aux / S : 0;

  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  std::exception_ptr err;
  auto work = [&] {
    try {
      for (;;) {
        const uint64_t i = next++;
        if (i >= S || failed) return;
        const SlicePosition b{h.row + i * rows_per, counts.inputs, h.aux + i * aux_per};
        const SlicePosition e{b.row + rows_per, counts.inputs, b.aux + aux_per};
        auto cs = make(b, e, static_cast<int64_t>(i), h);
        circuit.synthesize_slice(cs, shared, static_cast<size_t>(i));
        if (!(cs.at() == e))
          throw std::logic_error("sliced synthesis: slice " + std::to_string(i) + " filled " +
                                 std::to_string(cs.at().row - b.row) + " of its " + std::to_string(rows_per) +
                                 " constraints and " + std::to_string(cs.at().aux - b.aux) + " of its " +
                                 std::to_string(aux_per) + " auxiliaries");
        cs.finish();
      }
    } catch (...) {
      failed = true;
      std::lock_guard lk(err_mu);
      if (!err) err = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  const uint64_t want = std::max<uint64_t>(1, std::min<uint64_t>(threads, S));
  for (uint64_t t = 1; t < want; ++t) {
    try {
      pool.emplace_back(work);
    } catch (...) {  // the system refused a thread: the ones started (and this one) do the work
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (err) std::rethrow_exception(err);

  auto tail = make(SlicePosition{counts.constraints - counts.inputs, counts.inputs, counts.aux}, end, int64_t(-2), h);
  r1cs::enforce_input_constraints(tail, static_cast<uint32_t>(counts.inputs));
  if (!(tail.at() == end)) throw std::logic_error("sliced synthesis: the input constraints did not fill their place");
  tail.finish();
}

// ---------------------------------------------------------------------------------------------
// The proving assignment, sliced.

// a, b, c and the assignment of one circuit, in arrays of the circuit's exact size; what
// groth16::witness_of reads (the same accessors as r1cs::ProvingAssignment).
class SlicedAssignment {
 public:
  SlicedAssignment() = default;
  // Uninitialized arrays for `counts` (each slice writes its part: no zeroing pass).
  explicit SlicedAssignment(const r1cs::ShapeCounts& counts)
      : constraints_(counts.constraints),
        inputs_(counts.inputs),
        aux_count_(counts.aux),
        a_(std::make_unique_for_overwrite<fr_t[]>(counts.constraints)),
        b_(std::make_unique_for_overwrite<fr_t[]>(counts.constraints)),
        c_(std::make_unique_for_overwrite<fr_t[]>(counts.constraints)),
        input_(std::make_unique_for_overwrite<fr_t[]>(counts.inputs)),
        aux_(std::make_unique_for_overwrite<fr_t[]>(counts.aux)) {
    if (inputs_) input_[0] = fr_t::one();
  }

  std::span<const fr_t> a() const { return {a_.get(), constraints_}; }
  std::span<const fr_t> b() const { return {b_.get(), constraints_}; }
  std::span<const fr_t> c() const { return {c_.get(), constraints_}; }
  std::span<const fr_t> input_assignment() const { return {input_.get(), inputs_}; }
  std::span<const fr_t> aux_assignment() const { return {aux_.get(), aux_count_}; }
  size_t num_constraints() const { return constraints_; }
  size_t num_inputs() const { return inputs_; }
  size_t num_aux() const { return aux_count_; }

  int64_t first_unsatisfied() const { return r1cs::first_unsatisfied(a(), b(), c()); }
  bool is_satisfied() const { return first_unsatisfied() < 0; }

 private:
  template <class Policy>
  friend class ProvingSlice;
  uint64_t constraints_ = 0, inputs_ = 0, aux_count_ = 0;
  std::unique_ptr<fr_t[]> a_, b_, c_, input_, aux_;
};

// The constraint system of one part: values into the assignment's arrays at the cursors.
template <class Policy>
class ProvingSlice : public SliceCursor {
 public:
  using policy = Policy;
  using lc_t = typename Policy::lc_t;
  static constexpr bool kNeedsValues = true;

  ProvingSlice(SlicedAssignment& out, SlicePosition begin, SlicePosition end, bool inputs)
      : SliceCursor(begin, end, inputs), out_(out) {}

  r1cs::Variable alloc(const fr_t& value) {
    const uint32_t i = next_aux();
    out_.aux_[i] = value;
    return r1cs::Variable::aux(i);
  }
  r1cs::Variable alloc_input(const fr_t& value) {
    const uint32_t i = next_input();
    out_.input_[i] = value;
    return r1cs::Variable::input(i);
  }
  // Reads only variables the contract lets this part name, all written before.
  void enforce(const lc_t& a, const lc_t& b, const lc_t& c) {
    const uint64_t row = next_row();
    const fr_t* in = out_.input_.get();
    const fr_t* ax = out_.aux_.get();
    out_.a_[row] = r1cs::evaluate(a, in, ax);
    out_.b_[row] = r1cs::evaluate(b, in, ax);
    out_.c_[row] = r1cs::evaluate(c, in, ax);
  }
  void finish() {}

 private:
  SlicedAssignment& out_;
};

// The proving assignment of `circuit`, whose exact counts are `counts`, synthesized on `threads`
// threads (equal to r1cs::ProvingAssignment's after synthesize_circuit, value for value).
template <class Policy = r1cs::DefaultPolicy, class Circuit>
SlicedAssignment prove_assignment_sliced(const Circuit& circuit, const r1cs::ShapeCounts& counts, unsigned threads) {
  SlicedAssignment out(counts);
  synthesize_sliced(circuit, counts, threads, [&](SlicePosition b, SlicePosition e, int64_t part, SlicePosition) {
    return ProvingSlice<Policy>(out, b, e, part == -1);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// The QAP's evaluation at tau, sliced: u_j(tau) = sum over rows i of A[i][j] * lag[i] (v from B,
// w from C), summed as the constraints arrive, without matrices. Column j numbers the variables
// inputs first (j = input index, then num_inputs + aux index), as R1csMatrices does.

struct QapColumns {
  fr_t *u = nullptr, *v = nullptr, *w = nullptr;  // num_inputs + num_aux each, zeroed before
  const fr_t* lag = nullptr;                      // L_i(tau) for every row
  uint64_t num_inputs = 0;
};

template <class Storage = r1cs::Lc::storage_type>
class QapSlice : public SliceCursor {
 public:
  using lc_t = r1cs::BasicLc<Storage>;
  static constexpr bool kNeedsValues = false;

  // A slice (`shared_columns` > 0) adds to its own columns directly and to the shared ones
  // (columns below shared_columns) in local sums, merged under `merge_mu` by finish(); the shared
  // part and the input constraints (shared_columns == 0) run alone and add directly.
  QapSlice(const QapColumns& q, SlicePosition begin, SlicePosition end, bool inputs, uint64_t shared_columns,
           std::mutex& merge_mu)
      : SliceCursor(begin, end, inputs),
        q_(q),
        own_begin_(q.num_inputs + begin.aux),
        own_end_(q.num_inputs + end.aux),
        shared_(shared_columns),
        merge_mu_(merge_mu) {
    if (shared_) {
      for (auto* l : {&lu_, &lv_, &lw_}) l->assign(shared_, fr_t::zero());
    }
  }

  r1cs::Variable alloc(const fr_t&) { return r1cs::Variable::aux(next_aux()); }
  r1cs::Variable alloc_input(const fr_t&) { return r1cs::Variable::input(next_input()); }
  void enforce(const lc_t& a, const lc_t& b, const lc_t& c) {
    const fr_t& l = q_.lag[next_row()];
    add(a, q_.u, lu_, l);
    add(b, q_.v, lv_, l);
    add(c, q_.w, lw_, l);
  }
  void finish() {
    if (!shared_) return;
    std::lock_guard lk(merge_mu_);
    for (uint64_t j = 0; j < shared_; ++j) {
      q_.u[j] += lu_[j];
      q_.v[j] += lv_[j];
      q_.w[j] += lw_[j];
    }
  }

 private:
  void add(const lc_t& lc, fr_t* out, std::vector<fr_t>& local, const fr_t& l) {
    for (const r1cs::Term& t : lc.terms()) {
      const uint64_t col = t.var.is_input() ? t.var.index() : q_.num_inputs + t.var.index();
      if (!shared_ || (col >= own_begin_ && col < own_end_)) {
        out[col] += t.coeff * l;
      } else if (col < shared_) {
        local[col] += t.coeff * l;
      } else {
        throw std::logic_error("sliced synthesis: a slice names variable " + std::to_string(col) +
                               ", which belongs to another slice");
      }
    }
  }
  QapColumns q_;
  uint64_t own_begin_, own_end_, shared_;
  std::mutex& merge_mu_;
  std::vector<fr_t> lu_, lv_, lw_;
};

// Adds the evaluation at tau of `circuit` (exact counts `counts`) into q's columns, on `threads`
// threads.
template <class Storage = r1cs::Lc::storage_type, class Circuit>
void evaluate_qap_sliced(const Circuit& circuit, const r1cs::ShapeCounts& counts, const QapColumns& q,
                         unsigned threads) {
  std::mutex merge_mu;
  synthesize_sliced(circuit, counts, threads, [&](SlicePosition b, SlicePosition e, int64_t part, SlicePosition h) {
    return QapSlice<Storage>(q, b, e, part == -1, part >= 0 ? q.num_inputs + h.aux : 0, merge_mu);
  });
}

}  // namespace cuzk::synth
