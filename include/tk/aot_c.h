/* The C side of tk's runtime, for the C launchers `tkc compile --emit cpp`
 * declares in NAME_c.h: open a device, allocate and copy memory; the
 * launchers take device addresses (tk_buffer_address). Every call that can
 * fail returns TK_OK (0) on success, else one of the TK_ERROR_* codes below
 * with *error (when error is not NULL) pointing at a message that stays valid
 * until the calling thread's next failing call. No exception crosses this
 * interface. docs/aot.md. */
#ifndef TK_AOT_C_H
#define TK_AOT_C_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What went wrong (tk::StatusCode in tk/aot.h; the numbers do not change). */
#define TK_OK 0
#define TK_ERROR_INVALID_ARGUMENT 1 /* null, misaligned or mistyped argument, zero grid, null handle */
#define TK_ERROR_NO_VARIANT 2       /* no variant compiled for these const values */
#define TK_ERROR_UNAVAILABLE 3      /* no CUDA driver or GPU, or a destroyed device */
#define TK_ERROR_DEVICE 4           /* the device failed the work (a CUDA error; the sim's out-of-bounds access or race) */
#define TK_ERROR_LOAD_FAILED 5      /* the embedded kernels do not load (stale header, corrupted bundle, JIT) */
#define TK_ERROR_OUT_OF_MEMORY 6    /* host or device memory ran out */
#define TK_ERROR_INTERNAL 7         /* a bug in tk: please report it */
/* "ok", "invalid argument", ... for any of the codes above. */
const char *tk_status_name(int code);
typedef struct tk_device tk_device;
typedef struct tk_buffer tk_buffer;
typedef struct tk_stream tk_stream;
typedef struct tk_dim3 {
  uint32_t x, y, z;
} tk_dim3;

/* A launcher's `desc<T, [..]>` argument (tk::TensorDescriptor, docs/api.md):
 * its buffer, rank (1 to 5), sizes and strides in elements, outermost dim
 * first (the last stride 1, the others multiples of 16 bytes). The block
 * shape is the launched variant's. The launcher checks it as tk::Device::launch
 * does and returns TK_ERROR_INVALID_ARGUMENT naming the rule it breaks. */
typedef struct tk_tensor_descriptor {
  const tk_buffer *base;
  int rank;
  int64_t shape[5];
  int64_t strides[5];
} tk_tensor_descriptor;

/* spec: NULL or "" for the default device (a GPU, else the sim when linked),
 * or "sim", "cuda", "cuda:N"; the sim takes options as tk::Device::open
 * does ("sim:racecheck,overflow,workers=2"). */
int tk_device_open(const char *spec, tk_device **device, const char **error);
void tk_device_close(tk_device *device); /* buffers may outlive it */

int tk_buffer_alloc(tk_device *device, size_t bytes, tk_buffer **buffer, const char **error);
void tk_buffer_free(tk_buffer *buffer);
uint64_t tk_buffer_address(const tk_buffer *buffer); /* what a launcher's pointer argument takes */

int tk_copy_to_device(tk_device *device, tk_buffer *dst, const void *src, size_t bytes, const char **error);
int tk_copy_to_host(tk_device *device, void *dst, const tk_buffer *src, size_t bytes, const char **error);

/* Streams (tk::Stream): work queued on one runs in submission order; on a
 * GPU, launches (NAME_c_stream) and async copies return once queued, so the
 * host memory of a copy must stay valid until tk_stream_synchronize. The sim
 * runs each piece of work when it is submitted. Destroy a device's streams
 * before closing it. */
int tk_stream_create(tk_device *device, tk_stream **stream, const char **error);
int tk_stream_synchronize(tk_stream *stream, const char **error);
void tk_stream_destroy(tk_stream *stream); /* queued work still finishes */
int tk_copy_to_device_async(tk_stream *stream, tk_buffer *dst, const void *src, size_t bytes, const char **error);
int tk_copy_to_host_async(tk_stream *stream, void *dst, const tk_buffer *src, size_t bytes, const char **error);

/* Memory and streams the program owns (tk::Device::borrow, borrowStream):
 * tk_buffer_borrow wraps `bytes` at `address` (a CUdeviceptr or cudaMalloc
 * pointer on a GPU, a host pointer on the sim; bytes may be 0, address NULL
 * only then); tk_buffer_free drops the wrapper and never frees the memory.
 * tk_stream_borrow wraps a CUstream / cudaStream_t (NULL: the legacy default
 * stream; 0x1 CU_STREAM_LEGACY, 0x2 CU_STREAM_PER_THREAD): launches on it
 * (NAME_c_stream) are queued there and return at once; tk_stream_destroy
 * drops the wrapper and never destroys the stream. The program keeps both
 * alive until the work queued on them is done. */
int tk_buffer_borrow(tk_device *device, void *address, size_t bytes, tk_buffer **buffer, const char **error);
int tk_stream_borrow(tk_device *device, void *native_stream, tk_stream **stream, const char **error);
/* The CUstream a tk_stream queues on: a created stream's own, a borrowed
 * one's; NULL on the sim unless borrowed. */
void *tk_stream_native(const tk_stream *stream);

#ifdef __cplusplus
}
#endif

#endif /* TK_AOT_C_H */
