// scale_jaxlib.cc: the C++ floors of bench/real_xla.ts, built at bench time
// against jaxlib's own xla/ffi/api/ffi.h: `y = alpha * x` over F32 buffers as
//   - bench_cc_sync:   a synchronous handler (returns ffi::Error),
//   - bench_cc_ready:  an async handler whose ffi::Future is already
//                      available when it returns,
//   - bench_cc_thread: an async handler whose future a worker thread
//                      completes (a queue served by one thread, as a handler
//                      that hands its work to a pool would).
// They are what XLA itself charges for each way of answering a call.
//
// Copyright 2026 The deno-xla-ffi Authors. Licensed under Apache-2.0.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>

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
