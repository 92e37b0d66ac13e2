// The hand-written CUDA twin of stdlib/elementwise.tk's complex_activation,
// for bench/compile_latency.sh: out = relu((sin(x) * cos(y) + x) * y).
extern "C" __global__ void complex_activation(const float *__restrict__ x, const float *__restrict__ y,
                                              float *__restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float a = x[i], b = y[i];
    out[i] = fmaxf((sinf(a) * cosf(b) + a) * b, 0.0f);
  }
}
