/* The C launchers (elementwise_c.h from tk_add_kernels, tk/aot_c.h) from a
 * C program: complex_activation on the sim at masked sizes against a double
 * reference, on the default stream and queued on a created stream, then the errors a C caller gets -- a null pointer, a
 * zero grid, null out-pointers, a stream whose device was closed, a device that does not exist -- as return codes and
 * messages; and a kernel with tensor descriptor parameters through tk_tensor_descriptor. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "descriptor_params_c.h"
#include "elementwise_c.h"

static int fail(const char *what, const char *error) {
  fprintf(stderr, "%s: %s\n", what, error ? error : "(no message)");
  return 1;
}

/* With `stream`, the copies and the launch are queued on it (waited for
 * before checking); else they run on the device's default stream. */
static int run(tk_device *dev, tk_stream *stream, int32_t n) {
  const char *error = NULL;
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  for (int32_t i = 0; i < n; ++i) {
    x[i] = (float)rand() / RAND_MAX * 8 - 4;
    y[i] = (float)rand() / RAND_MAX * 8 - 4;
    out[i] = NAN;
  }
  tk_buffer *bx, *by, *bout;
  if (tk_buffer_alloc(dev, n * sizeof(float), &bx, &error) || tk_buffer_alloc(dev, n * sizeof(float), &by, &error) ||
      tk_buffer_alloc(dev, n * sizeof(float), &bout, &error))
    return fail("alloc", error);
  /* elementwise_c.h launches the first -D set: BLOCK=128. */
  tk_dim3 grid = {(uint32_t)((n + 127) / 128), 1, 1};
  const float *px = (const float *)(uintptr_t)tk_buffer_address(bx),
              *py = (const float *)(uintptr_t)tk_buffer_address(by);
  float *pout = (float *)(uintptr_t)tk_buffer_address(bout);
  if (stream) {
    if (tk_copy_to_device_async(stream, bx, x, n * sizeof(float), &error) ||
        tk_copy_to_device_async(stream, by, y, n * sizeof(float), &error) ||
        tk_copy_to_device_async(stream, bout, out, n * sizeof(float), &error))
      return fail("async copy", error);
    if (complex_activation_c_stream(stream, grid, px, py, pout, n, &error))
      return fail("complex_activation_c_stream", error);
    if (tk_copy_to_host_async(stream, out, bout, n * sizeof(float), &error)) return fail("async copy back", error);
    if (tk_stream_synchronize(stream, &error)) return fail("synchronize", error);
  } else {
    if (tk_copy_to_device(dev, bx, x, n * sizeof(float), &error) ||
        tk_copy_to_device(dev, by, y, n * sizeof(float), &error) ||
        tk_copy_to_device(dev, bout, out, n * sizeof(float), &error))
      return fail("copy", error);
    if (complex_activation_c(dev, grid, px, py, pout, n, &error)) return fail("complex_activation_c", error);
    if (tk_copy_to_host(dev, out, bout, n * sizeof(float), &error)) return fail("copy back", error);
  }
  for (int32_t i = 0; i < n; ++i) {
    double a = x[i], b = y[i], want = (sin(a) * cos(b) + a) * b;
    if (want < 0) want = 0;
    if (!(fabs(out[i] - want) <= 1e-5 * (1 + fabs(want)))) {
      fprintf(stderr, "n=%d: out[%d] = %g, want %g\n", n, i, out[i], want);
      return 1;
    }
  }
  tk_buffer_free(bx);
  tk_buffer_free(by);
  tk_buffer_free(bout);
  free(x);
  free(y);
  free(out);
  return 0;
}

/* affine_1d (tests/kernels/descriptor_params.tk): y = 2 x + 1 through two
 * rank-1 descriptors at a size that leaves a partial block; then a
 * descriptor breaking a rule and a null one, as return codes. */
static int runDescriptors(tk_device *dev) {
  const char *error = NULL;
  enum { n = 781 };
  float x[n], y[n];
  for (int i = 0; i < n; ++i) x[i] = (float)rand() / RAND_MAX * 8 - 4, y[i] = NAN;
  tk_buffer *bx, *by;
  if (tk_buffer_alloc(dev, sizeof x, &bx, &error) || tk_buffer_alloc(dev, sizeof y, &by, &error) ||
      tk_copy_to_device(dev, bx, x, sizeof x, &error) || tk_copy_to_device(dev, by, y, sizeof y, &error))
    return fail("descriptor buffers", error);
  tk_tensor_descriptor dx = {bx, 1, {n}, {1}}, dy = {by, 1, {n}, {1}};
  tk_dim3 grid = {(n + 255) / 256, 1, 1};
  if (affine_1d_c(dev, grid, &dx, &dy, &error)) return fail("affine_1d_c", error);
  if (tk_copy_to_host(dev, y, by, sizeof y, &error)) return fail("copy back", error);
  for (int i = 0; i < n; ++i)
    if (y[i] != (float)((double)x[i] * 2 + 1)) {
      fprintf(stderr, "affine_1d at %d: %g, want %g\n", i, y[i], (double)x[i] * 2 + 1);
      return 1;
    }
  tk_tensor_descriptor past = {bx, 1, {n + 1}, {1}};
  if (affine_1d_c(dev, grid, &past, &dy, &error) != TK_ERROR_INVALID_ARGUMENT || !strstr(error, "reaches past its buffer"))
    return fail("a descriptor past its buffer should fail so", error);
  if (affine_1d_c(dev, grid, NULL, &dy, &error) != TK_ERROR_INVALID_ARGUMENT ||
      strcmp(error, "affine_1d: argument 'x' is a null tk_tensor_descriptor") != 0)
    return fail("a null descriptor should fail so", error);
  tk_buffer_free(bx);
  tk_buffer_free(by);
  return 0;
}

int main(void) {
  const char *error = NULL;
  tk_device *dev;
  srand(12345u ^ (unsigned)(uintptr_t)&error);
  if (tk_device_open("sim", &dev, &error)) return fail("open", error);
  if (elementwise_load_c(dev, &error)) return fail("load", error);
  if (run(dev, NULL, 1) || run(dev, NULL, 781) || run(dev, NULL, 98433) || runDescriptors(dev)) return 1;
  tk_stream *stream;
  if (tk_stream_create(dev, &stream, &error)) return fail("tk_stream_create", error);
  if (run(dev, stream, 781) || run(dev, stream, 98433)) return 1;
  if (complex_activation_c_stream(NULL, (tk_dim3){1, 1, 1}, NULL, NULL, NULL, 16, &error) !=
          TK_ERROR_INVALID_ARGUMENT ||
      strcmp(error, "complex_activation: a null tk_stream") != 0)
    return fail("a null stream should fail so", error);
  tk_stream_destroy(stream);

  tk_dim3 one = {1, 1, 1}, zero = {0, 1, 1};
  if (complex_activation_c(dev, one, NULL, NULL, NULL, 16, &error) != TK_ERROR_INVALID_ARGUMENT ||
      strcmp(error, "complex_activation: argument 'x' (*f32) is a null pointer") != 0)
    return fail("a null pointer should fail so", error);
  tk_buffer *b;
  if (tk_buffer_alloc(dev, 64, &b, &error)) return fail("alloc", error);
  float *p = (float *)(uintptr_t)tk_buffer_address(b);
  if (complex_activation_c(dev, zero, p, p, p, 16, &error) != TK_ERROR_INVALID_ARGUMENT ||
      !strstr(error, "argument 'grid' (0, 1, 1)"))
    return fail("a zero grid should fail so", error);
  tk_buffer_free(b);
  /* Out-pointers are checked: a null one is an error, not a crash. */
  if (tk_buffer_alloc(dev, 64, NULL, &error) != TK_ERROR_INVALID_ARGUMENT || !strstr(error, "null result pointer"))
    return fail("a null buffer out-pointer should fail so", error);
  elementwise_unload_c(dev);
  tk_device_close(dev);
  if (tk_device_open("sim", NULL, &error) != TK_ERROR_INVALID_ARGUMENT || !strstr(error, "null result pointer"))
    return fail("a null device out-pointer should fail so", error);

  /* A stream outliving its device fails with TK_ERROR_UNAVAILABLE instead of
   * touching the freed device. */
  tk_device *gone;
  tk_stream *orphan;
  tk_buffer *kept;
  float host[16] = {0};
  if (tk_device_open("sim", &gone, &error) || tk_buffer_alloc(gone, sizeof host, &kept, &error) ||
      tk_stream_create(gone, &orphan, &error))
    return fail("open, alloc, stream", error);
  tk_device_close(gone);
  if (tk_copy_to_device_async(orphan, kept, host, sizeof host, &error) != TK_ERROR_UNAVAILABLE ||
      !strstr(error, "the stream's device has been destroyed"))
    return fail("an async copy on an orphaned stream should fail so", error);
  if (tk_copy_to_host_async(orphan, host, kept, sizeof host, &error) != TK_ERROR_UNAVAILABLE)
    return fail("an async copy on an orphaned stream should fail so", error);
  if (tk_stream_synchronize(orphan, &error) != TK_ERROR_UNAVAILABLE)
    return fail("synchronizing an orphaned stream should fail so", error);
  tk_stream_destroy(orphan);
  tk_buffer_free(kept);

  tk_device *none;
  if (tk_device_open("tpu", &none, &error) != TK_ERROR_INVALID_ARGUMENT || !strstr(error, "unknown device 'tpu'"))
    return fail("an unknown device should fail so", error);
  if (strcmp(tk_status_name(TK_OK), "ok") != 0 || strcmp(tk_status_name(TK_ERROR_UNAVAILABLE), "device unavailable") != 0)
    return fail("tk_status_name", tk_status_name(TK_ERROR_UNAVAILABLE));
  printf("ok\n");
  return 0;
}
