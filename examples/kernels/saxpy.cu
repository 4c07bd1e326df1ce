// y = a * x + y over n floats: the example kernel of the CUDA bindings.
// build.ts (`deno task build:ptx`) compiles it to saxpy.ptx with nvcc.
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// An empty kernel, for measuring launch overhead.
extern "C" __global__ void empty() {}
