// Back-off for polling loops with a deadline (MPI requests, CUDA events, NCCL state).
//
// pause() is called after each unsuccessful poll: for the first 2 ms of the wait it only yields
// the CPU (std::this_thread::yield), then it sleeps 20 us per poll, and after 100 ms 500 us. Most
// waits of a redistribute (the agreement of ranks a few microseconds apart, a 1 MiB collective)
// end within the yielding phase, so they cost no sleep: on the GPU VMs a sleep_for(20 us) was
// measured to take 100-250 us, which made a 15 us call take 250 us now and then. Oversubscribed
// ranks still make progress, since yielding hands the core to any other runnable process.
#pragma once

#include <chrono>
#include <thread>

namespace axe {

class Backoff {
 public:
  void pause() {
    const auto waited = std::chrono::steady_clock::now() - start_;
    if (waited < std::chrono::milliseconds(2)) std::this_thread::yield();
    else if (waited < std::chrono::milliseconds(100)) std::this_thread::sleep_for(std::chrono::microseconds(20));
    else std::this_thread::sleep_for(std::chrono::microseconds(500));
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace axe
