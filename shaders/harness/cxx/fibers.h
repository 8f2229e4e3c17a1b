// fibers.h: the threads of one threadgroup, run as fibers (own stacks, cooperative switches) on one OS thread.
//
// Invariant: a thread that reaches threadgroup_barrier (or a simd operation) does not go on
// until every thread of its threadgroup (or of its simdgroup) has reached it; a thread that
// exits while others wait there is reported as divergence, never silently released.
// Mutation that would silently break it: releasing a barrier when the threads that have not
// reached it are merely "not runnable" (e.g. counting exited threads as arrived) — a kernel
// that returns early before a barrier would then pass here and hang or race on a GPU.
#pragma once

// Fibers start through ucontext (makecontext gives each its own stack) and then switch
// with _setjmp/_longjmp, which, unlike swapcontext, make no system call per switch. A
// fortified _longjmp refuses to jump between stacks, so the harness builds without it.
#if defined(_FORTIFY_SOURCE) && _FORTIFY_SOURCE > 0
#error "build the harness with -U_FORTIFY_SOURCE: fibers switch stacks with _longjmp"
#endif

#include <setjmp.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace harness {

constexpr unsigned kSimdWidth = 32;          // Apple GPUs: 32 threads per simdgroup
constexpr size_t kStackBytes = 128 * 1024;   // per fiber; kernels keep small locals

enum class State { runnable, at_group_barrier, at_simd_barrier, done };

struct Thread {
  ucontext_t ctx;        // the entry context, used once
  jmp_buf resume_point;  // where the fiber parked
  bool started = false;
  State state = State::runnable;
  unsigned index = 0;      // thread_index_in_threadgroup
  unsigned lane = 0;       // thread_index_in_simdgroup
  unsigned simdgroup = 0;  // simdgroup_index_in_threadgroup
};

// One slot per lane for the value a simd operation exchanges, twice: operation k uses
// side k % 2, so a lane that has read its result may go on and write the next operation's
// value while slower lanes still read this one. (No lane can get two operations ahead: the
// next wait needs every lane.)
struct SimdExchange {
  alignas(16) unsigned char slot[2][kSimdWidth][16];
  unsigned side[kSimdWidth];  // per lane: the side its next operation uses
  // A simdgroup-matrix operation is computed once, by lane 0 (the first lane the scheduler
  // resumes after the rendezvous), into matrix; the other lanes copy it. serial numbers the
  // operations, so a lane that would copy before lane 0 filled it is caught.
  alignas(16) unsigned char matrix[8 * 8 * 4];
  uint64_t matrix_serial;
  uint64_t lane_serial[kSimdWidth];
};

class Threadgroup {
 public:
  // run executes body on n threads and returns "" or what went wrong.
  std::string run(unsigned n, const std::function<void(const Thread&)>& body);

  Thread& current() { return *cur_; }
  unsigned simd_size(unsigned sg) const {
    unsigned rest = unsigned(threads_.size()) - sg * kSimdWidth;
    return rest < kSimdWidth ? rest : kSimdWidth;
  }
  SimdExchange& exchange(unsigned sg) { return exchange_[sg]; }

  // wait parks the current thread in state s and returns when the scheduler releases it.
  void wait(State s) {
    cur_->state = s;
    if (_setjmp(cur_->resume_point) == 0) _longjmp(scheduler_, 1);
  }

 private:
  static void entry();
  void resume(Thread& t);
  void start(unsigned n);
  bool release_simdgroup(unsigned sg, std::string& err);
  bool release_group(std::string& err);

  std::vector<Thread> threads_;
  std::unique_ptr<char[]> stacks_;  // not zeroed: fibers write their stacks before reading
  size_t stack_threads_ = 0;
  std::vector<SimdExchange> exchange_;
  jmp_buf scheduler_;
  Thread* cur_ = nullptr;
  const std::function<void(const Thread&)>* body_ = nullptr;
};

inline Threadgroup* g_group = nullptr;  // the threadgroup being run
inline std::string g_mutant;            // the deliberately broken variant selected, or ""

inline void Threadgroup::entry() {
  Threadgroup* g = g_group;
  (*g->body_)(*g->cur_);
  g->cur_->state = State::done;
  _longjmp(g->scheduler_, 1);  // never returns: the fiber's stack is abandoned
}

// resume runs t until it parks or exits. Its frame stays live while t runs on its own
// stack, so the fiber can _longjmp back into it.
__attribute__((noinline)) inline void Threadgroup::resume(Thread& t) {
  cur_ = &t;
  if (_setjmp(scheduler_) == 0) {
    if (!t.started) {
      t.started = true;
      setcontext(&t.ctx);
    }
    _longjmp(t.resume_point, 1);
  }
}

inline void Threadgroup::start(unsigned n) {
  threads_.assign(n, Thread{});
  if (stack_threads_ < n) {
    stacks_.reset(new char[n * kStackBytes]);
    stack_threads_ = n;
  }
  exchange_.assign((n + kSimdWidth - 1) / kSimdWidth, SimdExchange{});
  for (unsigned i = 0; i < n; ++i) {
    Thread& t = threads_[i];
    t.index = i;
    t.lane = i % kSimdWidth;
    t.simdgroup = i / kSimdWidth;
    getcontext(&t.ctx);
    t.ctx.uc_stack.ss_sp = stacks_.get() + i * kStackBytes;
    t.ctx.uc_stack.ss_size = kStackBytes;
    t.ctx.uc_link = nullptr;  // entry never returns
    makecontext(&t.ctx, &Threadgroup::entry, 0);
  }
}

// release_simdgroup lets go simdgroup sg when all its lanes wait at a simd operation.
inline bool Threadgroup::release_simdgroup(unsigned sg, std::string& err) {
  unsigned waiting = 0, done = 0, n = simd_size(sg);
  for (unsigned l = 0; l < n; ++l) {
    State s = threads_[sg * kSimdWidth + l].state;
    waiting += s == State::at_simd_barrier;
    done += s == State::done;
  }
  if (waiting == n) {
    for (unsigned l = 0; l < n; ++l) threads_[sg * kSimdWidth + l].state = State::runnable;
    return true;
  }
  if (waiting > 0 && done > 0 && err.empty()) {
    err = "simd divergence: in simdgroup " + std::to_string(sg) + ", " + std::to_string(done) +
          " lanes exited while " + std::to_string(waiting) + " wait at a simd operation";
  }
  return false;
}

// release_group lets go the threadgroup barrier when every thread waits at it.
inline bool Threadgroup::release_group(std::string& err) {
  unsigned waiting = 0, done = 0;
  for (Thread& t : threads_) {
    waiting += t.state == State::at_group_barrier;
    done += t.state == State::done;
  }
  if (waiting == threads_.size()) {
    for (Thread& t : threads_) t.state = State::runnable;
    return true;
  }
  if (waiting > 0 && err.empty()) {
    err = "barrier divergence: " + std::to_string(waiting) + " of " + std::to_string(threads_.size()) +
          " threads wait at threadgroup_barrier, " + std::to_string(done) + " exited, the rest wait at a simd operation";
  }
  return false;
}

// run schedules adversarially for threadgroup barriers: each simdgroup runs as far as it
// can (through its simd operations) before the next one starts, as if the simdgroups ran at
// very different speeds; only a threadgroup_barrier makes one wait for the others.
inline std::string Threadgroup::run(unsigned n, const std::function<void(const Thread&)>& body) {
  Threadgroup* outer = g_group;
  g_group = this;
  body_ = &body;
  start(n);
  std::string err;
  const unsigned groups = (n + kSimdWidth - 1) / kSimdWidth;
  for (;;) {
    for (unsigned sg = 0; sg < groups && err.empty(); ++sg) {
      do {
        for (unsigned l = 0; l < simd_size(sg); ++l) {
          Thread& t = threads_[sg * kSimdWidth + l];
          if (t.state == State::runnable) resume(t);
        }
      } while (release_simdgroup(sg, err));
    }
    bool all_done = true;
    for (Thread& t : threads_) all_done = all_done && t.state == State::done;
    if (all_done) break;
    if (!err.empty()) break;
    if (release_group(err)) continue;
    if (err.empty()) err = "deadlock: threads wait at different kinds of barrier";
    break;
  }
  g_group = outer;
  return err;
}

// exchange_values deposits this lane's v, waits for the whole simdgroup, and returns the
// side of slots that now holds every lane's value for this operation.
template <typename T>
unsigned char (*exchange_values(T v))[16] {
  static_assert(sizeof(T) <= 16, "simd exchange slot");
  Threadgroup& g = *g_group;
  Thread& t = g.current();
  SimdExchange& ex = g.exchange(t.simdgroup);
  const unsigned side = ex.side[t.lane];
  ex.side[t.lane] = side ^ 1;
  std::memcpy(ex.slot[side][t.lane], &v, sizeof(T));
  g.wait(State::at_simd_barrier);
  return ex.slot[side];
}

// simd_reduce combines every lane's value in lane order.
template <typename T, typename F>
T simd_reduce(T v, F combine) {
  unsigned char(*slots)[16] = exchange_values(v);
  T r;
  std::memcpy(&r, slots[0], sizeof(T));
  for (unsigned l = 1; l < g_group->simd_size(g_group->current().simdgroup); ++l) {
    T x;
    std::memcpy(&x, slots[l], sizeof(T));
    r = combine(r, x);
  }
  return r;
}

// simd_read_lane returns lane's value.
template <typename T>
T simd_read_lane(T v, unsigned lane) {
  unsigned char(*slots)[16] = exchange_values(v);
  T r;
  std::memcpy(&r, slots[lane % g_group->simd_size(g_group->current().simdgroup)], sizeof(T));
  return r;
}

// simd_shuffle_xor_value returns the value of lane ^ mask (the whole simdgroup exchanges).
template <typename T>
T simd_shuffle_xor_value(T v, unsigned mask) {
  unsigned char(*slots)[16] = exchange_values(v);
  const unsigned n = g_group->simd_size(g_group->current().simdgroup);
  const unsigned from = (g_group->current().lane ^ mask) % n;
  T r;
  std::memcpy(&r, slots[from], sizeof(T));
  return r;
}

// kernel_fault reports a kernel that broke a rule Metal leaves undefined (a collective with
// disagreeing lanes, a partial simdgroup in a matrix op) and ends the driver.
[[noreturn]] inline void kernel_fault(const std::string& msg) {
  std::fprintf(stderr, "driver: %s\n", msg.c_str());
  std::exit(1);
}

// Collective is what a simdgroup-matrix operation deposits: every lane of the simdgroup must
// call the same operation with the same source or destination, stride and layout, and the
// same operand values, as the GPU executes it once for the whole simdgroup.
struct Collective {
  uint32_t op;
  uint32_t arg;
  uint64_t key;
};
static_assert(sizeof(Collective) == 16, "simd exchange slot");

// collective waits for the whole simdgroup at a matrix operation and checks the lanes agree;
// it returns the simdgroup's exchange, whose matrix lane 0 fills (leader_fill) and the other
// lanes then copy (follower_copy).
inline SimdExchange& collective(Collective mine, const char* what) {
  Threadgroup& g = *g_group;
  const unsigned n = g.simd_size(g.current().simdgroup);
  if (n != kSimdWidth) {
    kernel_fault(std::string(what) + ": simdgroup " + std::to_string(g.current().simdgroup) + " has " +
                 std::to_string(n) + " threads; a simdgroup-matrix operation needs all 32 lanes");
  }
  unsigned char(*slots)[16] = exchange_values(mine);
  for (unsigned l = 1; l < n; ++l) {
    if (std::memcmp(slots[l], slots[0], sizeof(Collective)) != 0) {
      Collective a, b;
      std::memcpy(&a, slots[0], sizeof a);
      std::memcpy(&b, slots[l], sizeof b);
      kernel_fault(std::string(what) + ": the lanes of simdgroup " + std::to_string(g.current().simdgroup) +
                   " disagree (lane 0: op " + std::to_string(a.op) + " arg " + std::to_string(a.arg) +
                   ", lane " + std::to_string(l) + ": op " + std::to_string(b.op) + " arg " +
                   std::to_string(b.arg) + "; source, destination or operand values may differ too)");
    }
  }
  SimdExchange& ex = g.exchange(g.current().simdgroup);
  ex.lane_serial[g.current().lane]++;
  return ex;
}

// leader says whether this lane computes the operation (lane 0) and the others copy.
inline bool leader() { return g_group->current().lane == 0; }

inline void leader_fill(SimdExchange& ex, const void* m, size_t n) {
  std::memcpy(ex.matrix, m, n);
  ex.matrix_serial = ex.lane_serial[0];
}

inline void follower_copy(SimdExchange& ex, void* m, size_t n) {
  if (ex.matrix_serial != ex.lane_serial[g_group->current().lane]) {
    kernel_fault("harness: a lane copied a simdgroup-matrix result before lane 0 computed it");
  }
  std::memcpy(m, ex.matrix, n);
}

inline bool mutant_is(const char* name) { return g_mutant == name; }

}  // namespace harness
