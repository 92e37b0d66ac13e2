// The C interface of tk/aot_c.h over tk::Device and tk::Buffer: every
// tk::Error becomes its StatusCode (TK_ERROR_*) and a thread-local message.
#include "tk/aot.h"
#include "tk/aot_c.h"

struct tk_device {
  std::unique_ptr<tk::Device> device;
};
struct tk_buffer {
  tk::Buffer buffer;
};
struct tk_stream {
  tk::Stream stream;
};

namespace tk::aot {

int cStatus(const Status &status, const char **error) {
  if (status.ok()) return 0;
  thread_local std::string message;
  message = status.message();
  if (error) *error = message.c_str();
  return static_cast<int>(status.code());
}

Device &deviceOf(tk_device *d) { return *d->device; }
Stream &streamOf(tk_stream *s) { return s->stream; }

Status descriptorOf(const tk_tensor_descriptor *d, const char *kernel, const char *arg, TensorDescriptor &out) {
  const std::string where = std::string(kernel) + ": argument '" + arg + "'";
  if (!d) return Status::error(StatusCode::InvalidArgument, where + " is a null tk_tensor_descriptor");
  if (!d->base) return Status::error(StatusCode::InvalidArgument, where + " has a null base buffer");
  if (d->rank < 1 || d->rank > 5)
    return Status::error(StatusCode::InvalidArgument,
                         where + " has rank " + std::to_string(d->rank) + "; a descriptor has 1 to 5 dims");
  out = TensorDescriptor{d->base->buffer, std::vector<int64_t>(d->shape, d->shape + d->rank),
                         std::vector<int64_t>(d->strides, d->strides + d->rank), {}};
  return {};
}

}  // namespace tk::aot

namespace {

// Runs f, turning an exception into the C error convention.
template <class F>
int guarded(const char **error, F &&f) {
  try {
    f();
    return 0;
  } catch (const std::exception &e) {  // tk::Error, or std::bad_alloc
    return tk::aot::cStatus(tk::Status::error(tk::Status::codeOf(e), e.what()), error);
  } catch (...) {  // nothing crosses the C interface
    return tk::aot::cStatus(tk::Status::error(tk::StatusCode::Internal, "unknown exception"), error);
  }
}

// A created stream whose device is gone: TK_ERROR_UNAVAILABLE, as
// tk/aot_c.h says, before anything touches the device.
int closedStream(const tk_stream *stream, const char *who, const char **error) {
  if (!stream || stream->stream.valid()) return 0;
  return tk::aot::cStatus(tk::Status::error(tk::StatusCode::Unavailable,
                                            std::string(who) + ": the stream's device has been destroyed"),
                          error);
}

}  // namespace

extern "C" {

int tk_device_open(const char *spec, tk_device **device, const char **error) {
  return guarded(error, [&] {
    if (!device) throw tk::Error("tk_device_open: a null result pointer (tk_device **)");
    *device = nullptr;
    auto d = std::make_unique<tk_device>();
    d->device = spec && *spec ? tk::Device::open(std::string(spec)) : tk::Device::open();
    *device = d.release();
  });
}

void tk_device_close(tk_device *device) { delete device; }

int tk_buffer_alloc(tk_device *device, size_t bytes, tk_buffer **buffer, const char **error) {
  return guarded(error, [&] {
    if (!device) throw tk::Error("tk_buffer_alloc: a null device");
    if (!buffer) throw tk::Error("tk_buffer_alloc: a null result pointer (tk_buffer **)");
    auto b = std::make_unique<tk_buffer>();
    b->buffer = device->device->alloc(bytes);
    *buffer = b.release();
  });
}

void tk_buffer_free(tk_buffer *buffer) { delete buffer; }

uint64_t tk_buffer_address(const tk_buffer *buffer) { return buffer ? buffer->buffer.address() : 0; }

int tk_copy_to_device(tk_device *device, tk_buffer *dst, const void *src, size_t bytes, const char **error) {
  return guarded(error, [&] {
    if (!device || !dst) throw tk::Error("tk_copy_to_device: a null device or buffer");
    if (!src && bytes) throw tk::Error("tk_copy_to_device: a null source");
    device->device->copyToDevice(dst->buffer, src, bytes);
  });
}

int tk_copy_to_host(tk_device *device, void *dst, const tk_buffer *src, size_t bytes, const char **error) {
  return guarded(error, [&] {
    if (!device || !src) throw tk::Error("tk_copy_to_host: a null device or buffer");
    if (!dst && bytes) throw tk::Error("tk_copy_to_host: a null destination");
    device->device->copyToHost(dst, src->buffer, bytes);
  });
}

int tk_stream_create(tk_device *device, tk_stream **stream, const char **error) {
  return guarded(error, [&] {
    if (!device || !stream) throw tk::Error("tk_stream_create: a null device or result pointer");
    *stream = new tk_stream{device->device->createStream()};
  });
}

int tk_stream_synchronize(tk_stream *stream, const char **error) {
  if (int code = closedStream(stream, "tk_stream_synchronize", error)) return code;
  return guarded(error, [&] {
    if (!stream) throw tk::Error("tk_stream_synchronize: a null stream");
    stream->stream.synchronize();
  });
}

void tk_stream_destroy(tk_stream *stream) { delete stream; }

int tk_copy_to_device_async(tk_stream *stream, tk_buffer *dst, const void *src, size_t bytes, const char **error) {
  if (int code = closedStream(stream, "tk_copy_to_device_async", error)) return code;
  return guarded(error, [&] {
    if (!stream || !dst) throw tk::Error("tk_copy_to_device_async: a null stream or buffer");
    if (!src && bytes) throw tk::Error("tk_copy_to_device_async: a null source");
    stream->stream.device().copyToDeviceAsync(dst->buffer, src, bytes, stream->stream);
  });
}

int tk_copy_to_host_async(tk_stream *stream, void *dst, const tk_buffer *src, size_t bytes, const char **error) {
  if (int code = closedStream(stream, "tk_copy_to_host_async", error)) return code;
  return guarded(error, [&] {
    if (!stream || !src) throw tk::Error("tk_copy_to_host_async: a null stream or buffer");
    if (!dst && bytes) throw tk::Error("tk_copy_to_host_async: a null destination");
    stream->stream.device().copyToHostAsync(dst, src->buffer, bytes, stream->stream);
  });
}

int tk_buffer_borrow(tk_device *device, void *address, size_t bytes, tk_buffer **buffer, const char **error) {
  return guarded(error, [&] {
    if (!device || !buffer) throw tk::Error("tk_buffer_borrow: a null device or result pointer");
    *buffer = new tk_buffer{device->device->borrow(address, bytes)};
  });
}

int tk_stream_borrow(tk_device *device, void *native_stream, tk_stream **stream, const char **error) {
  return guarded(error, [&] {
    if (!device || !stream) throw tk::Error("tk_stream_borrow: a null device or result pointer");
    *stream = new tk_stream{device->device->borrowStream(native_stream)};
  });
}

void *tk_stream_native(const tk_stream *stream) { return stream ? stream->stream.native() : nullptr; }

}  // extern "C"

extern "C" const char *tk_status_name(int code) { return tk::statusCodeName(static_cast<tk::StatusCode>(code)); }
