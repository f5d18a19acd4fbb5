// Is a device-to-device cudaMemcpyAsync slower inside a CUDA graph than launched directly, and
// does the misalignment of its addresses matter? 128 MiB (and 64 MiB) copies, medians of 30.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
__global__ void touch(char* p) { if (threadIdx.x == 0 && blockIdx.x == 0) p[0] ^= 0; }
int main() {
  const size_t cap = (size_t(256) << 20) + 4096;
  char *a, *b; CK(cudaMalloc(&a, cap)); CK(cudaMalloc(&b, cap));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  struct C { size_t so, doff, n; };
  std::vector<C> cases;
  for (size_t n : {size_t(64) << 20, size_t(128) << 20})
    for (auto [so, d] : std::vector<std::pair<size_t, size_t>>{{0, 0}, {16, 16}, {4, 4}, {2, 2}, {1, 1}, {0, 2}, {2, 6}})
      cases.push_back({so, d, n - 2});
  for (const C& c : cases) {
    double t[3];
    for (int mode = 0; mode < 3; ++mode) {
      cudaGraphExec_t ex = nullptr;
      if (mode > 0) {
        cudaGraph_t g;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
        if (mode == 2) touch<<<1, 32, 0, s>>>(b);
        CK(cudaMemcpyAsync(b + c.doff, a + c.so, c.n, cudaMemcpyDeviceToDevice, s));
        if (mode == 2) touch<<<1, 32, 0, s>>>(b);
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ex, g, 0));
        cudaGraphDestroy(g);
      }
      std::vector<float> ms;
      for (int i = 0; i < 33; ++i) {
        cudaEventRecord(e0, s);
        if (ex) CK(cudaGraphLaunch(ex, s)); else CK(cudaMemcpyAsync(b + c.doff, a + c.so, c.n, cudaMemcpyDeviceToDevice, s));
        cudaEventRecord(e1, s); CK(cudaEventSynchronize(e1));
        float m; cudaEventElapsedTime(&m, e0, e1); if (i >= 3) ms.push_back(m);
      }
      std::sort(ms.begin(), ms.end()); t[mode] = ms[ms.size() / 2];
      if (ex) cudaGraphExecDestroy(ex);
    }
    std::printf("copy %4zu MiB src+%zu dst+%zu: direct %.4f ms  graph %.4f ms (%.2fx)  graph with kernels %.4f ms (%.2fx)\n",
                (c.n + 2) >> 20, c.so, c.doff, t[0], t[1], t[1] / t[0], t[2], t[2] / t[0]);
  }
  return 0;
}
