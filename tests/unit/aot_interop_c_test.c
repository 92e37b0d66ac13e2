/* The C side of borrowing (tk/aot_c.h): memory and a stream the program
 * owns handed to a C launcher (elementwise_c.h) on the sim, checked against
 * a double reference; freeing the wrappers leaves the program's memory
 * alone; a null address with a size is a precise error. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elementwise_c.h"

static int fail(const char *what, const char *error) {
  fprintf(stderr, "%s: %s\n", what, error ? error : "(no message)");
  return 1;
}

int main(void) {
  const char *error = NULL;
  tk_device *dev;
  if (tk_device_open("sim", &dev, &error)) return fail("open", error);
  enum { N = 781 };
  /* The program's memory and stream handle (host memory on the sim). */
  float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *out = malloc(N * sizeof(float));
  void *their_stream = (void *)(uintptr_t)0x5eed;
  for (int i = 0; i < N; ++i) {
    x[i] = (float)rand() / RAND_MAX * 8 - 4;
    y[i] = (float)rand() / RAND_MAX * 8 - 4;
    out[i] = NAN;
  }
  tk_buffer *bx, *by, *bout;
  if (tk_buffer_borrow(dev, x, N * sizeof(float), &bx, &error) || tk_buffer_borrow(dev, y, N * sizeof(float), &by, &error) ||
      tk_buffer_borrow(dev, out, N * sizeof(float), &bout, &error))
    return fail("tk_buffer_borrow", error);
  if ((float *)(uintptr_t)tk_buffer_address(bx) != x) return fail("tk_buffer_address", "not the borrowed address");
  tk_stream *stream;
  if (tk_stream_borrow(dev, their_stream, &stream, &error)) return fail("tk_stream_borrow", error);
  if (tk_stream_native(stream) != their_stream) return fail("tk_stream_native", "not the borrowed stream");
  tk_dim3 grid = {(N + 127) / 128, 1, 1}; /* BLOCK=128 */
  if (complex_activation_c_stream(stream, grid, x, y, out, N, &error)) return fail("complex_activation_c_stream", error);
  if (tk_stream_synchronize(stream, &error)) return fail("synchronize", error);
  for (int i = 0; i < N; ++i) {
    double a = x[i], b = y[i], want = (sin(a) * cos(b) + a) * b;
    if (want < 0) want = 0;
    if (!(fabs(out[i] - want) <= 1e-5 * (1 + fabs(want)))) {
      fprintf(stderr, "out[%d] = %g, want %g\n", i, out[i], want);
      return 1;
    }
  }
  tk_stream_destroy(stream);
  tk_buffer_free(bx);
  tk_buffer_free(by);
  tk_buffer_free(bout);
  tk_device_close(dev);
  /* The program's memory is still its own: tk freed none of it. */
  x[0] = y[0] = out[0] = 1;
  free(x);
  free(y);
  free(out);

  if (tk_device_open("sim", &dev, &error)) return fail("open", error);
  tk_buffer *b;
  if (tk_buffer_borrow(dev, NULL, 64, &b, &error) != TK_ERROR_INVALID_ARGUMENT ||
      !strstr(error, "Device::borrow: a null address with 64 bytes"))
    return fail("a null address should fail so", error);
  if (tk_stream_borrow(NULL, NULL, &stream, &error) != TK_ERROR_INVALID_ARGUMENT ||
      strcmp(error, "tk_stream_borrow: a null device or result pointer") != 0)
    return fail("a null device should fail so", error);
  tk_device_close(dev);
  printf("ok\n");
  return 0;
}
