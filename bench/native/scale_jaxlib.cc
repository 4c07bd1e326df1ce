// scale_jaxlib.cc: the C++ floors of bench/real_xla.ts, built at bench time
// against jaxlib's own xla/ffi/api/ffi.h: `y = alpha * x` over F32 buffers as
//   - bench_cc_sync:   a synchronous handler (returns ffi::Error),
//   - bench_cc_ready:  an async handler whose ffi::Future is already
//                      available when it returns,
//   - bench_cc_thread: an async handler whose future a worker thread
//                      completes (a queue served by one thread, as a handler
//                      that hands its work to a pool would),
//   - bench_cc_handoff: a synchronous handler that hands its work to one
//                      other thread and waits for it, with the waits a TS
//                      handler called from XLA's thread has (the serving
//                      thread spins 20 us for the next call, then sleeps on a
//                      futex; the caller spins 3 us, then yields): the floor
//                      of the two thread hand-offs such a call cannot avoid.
// They are what XLA itself charges for each way of answering a call.
//
// Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

void Scale(const ffi::Buffer<ffi::F32>& x, ffi::ResultBuffer<ffi::F32>& y, float alpha) {
  const float* xs = x.typed_data();
  float* ys = y->typed_data();
  const size_t n = x.element_count();
  for (size_t i = 0; i < n; i++) ys[i] = alpha * xs[i];
}

ffi::Error ScaleSync(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  Scale(x, y, alpha);
  return ffi::Error::Success();
}

ffi::Future ScaleReady(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  Scale(x, y, alpha);
  ffi::Promise promise;
  ffi::Future future(promise);
  promise.SetAvailable();
  return future;
}

struct Job {
  const float* xs;
  float* ys;
  size_t n;
  float alpha;
  ffi::Promise promise;
};

// One worker thread for the process (never joined: it lives as long as the
// library, which XLA never unloads).
class Worker {
 public:
  void Push(Job job) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!started_) {
        std::thread([this] { Run(); }).detach();
        started_ = true;
      }
      queue_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  void Run() {
    for (;;) {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty(); });
      Job job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      for (size_t i = 0; i < job.n; i++) job.ys[i] = job.alpha * job.xs[i];
      job.promise.SetAvailable();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool started_ = false;
};

Worker* worker = new Worker();

ffi::Future ScaleThread(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  Job job{x.typed_data(), y->typed_data(), x.element_count(), alpha, ffi::Promise()};
  ffi::Future future(job.promise);
  worker->Push(std::move(job));
  return future;
}

// One serving thread; a call is handed over through one slot (XLA's thread
// makes one call at a time per program here).
class Handoff {
 public:
  void Call(const float* xs, float* ys, size_t n, float alpha) {
    if (!started_.exchange(true)) std::thread([this] { Run(); }).detach();
    Req req{xs, ys, n, alpha, {0}};
    slot_.store(&req);
    seq_.fetch_add(1);
    if (sleeping_.load()) Wake(&seq_);
    auto start = Clock::now();
    while (req.done.load(std::memory_order_acquire) == 0) {
      if (Clock::now() - start < std::chrono::microseconds(3)) {
        Pause();
      } else {
        sched_yield();
      }
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Req {
    const float* xs;
    float* ys;
    size_t n;
    float alpha;
    std::atomic<int> done;
  };

  static void Pause() { __builtin_ia32_pause(); }
  static void Wake(std::atomic<int>* w) {
    syscall(SYS_futex, reinterpret_cast<int*>(w), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
  static void Wait(std::atomic<int>* w, int v) {
    struct timespec t = {0, 50000000};
    syscall(SYS_futex, reinterpret_cast<int*>(w), FUTEX_WAIT_PRIVATE, v, &t, nullptr, 0);
  }

  void Run() {
    for (;;) {
      Req* req = slot_.load(std::memory_order_acquire);
      if (req == nullptr) {
        auto start = Clock::now();
        unsigned k = 0;
        while ((req = slot_.load(std::memory_order_acquire)) == nullptr) {
          Pause();
          if ((++k & 63) == 0 && Clock::now() - start > std::chrono::microseconds(20)) {
            int seq = seq_.load(std::memory_order_acquire);
            sleeping_.store(true);
            if (slot_.load() == nullptr) Wait(&seq_, seq);
            sleeping_.store(false, std::memory_order_release);
            start = Clock::now();
          }
        }
      }
      slot_.store(nullptr, std::memory_order_relaxed);
      for (size_t i = 0; i < req->n; i++) req->ys[i] = req->alpha * req->xs[i];
      req->done.store(1, std::memory_order_release);
    }
  }

  std::atomic<bool> started_{false};
  std::atomic<Req*> slot_{nullptr};
  std::atomic<int> seq_{0};
  std::atomic<bool> sleeping_{false};
};

Handoff* handoff = new Handoff();

ffi::Error ScaleHandoff(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float alpha) {
  handoff->Call(x.typed_data(), y->typed_data(), x.element_count(), alpha);
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(bench_cc_sync, ScaleSync,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(bench_cc_ready, ScaleReady,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(bench_cc_thread, ScaleThread,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));
XLA_FFI_DEFINE_HANDLER_SYMBOL(bench_cc_handoff, ScaleHandoff,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attr<float>("alpha"));
