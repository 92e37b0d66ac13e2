// Tensor maps at launch (Bundle::tensorMaps, docs/api.md "Tensor maps"): the
// bundle's JSON and its checks, one per rule; the sim's encoding of a map,
// field by field; and the values Device::launch and a generated launcher's
// aot::Library::launch pass -- every ordinary one, then one 64-aligned map
// per entry -- seen by a device that records them.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>

#include "runtime/DeviceImpl.h"
#include "runtime/SimDevice.h"
#include "runtime_TestUtil.h"
#include "tk/aot.h"
#include "tk/runtime.h"

namespace {

const std::string kFile = TK_SOURCE_DIR + "/tests/kernels/descriptor_params.tk";

::testing::AssertionResult has(const std::string &msg, const std::string &part) {
  return msg.find(part) != std::string::npos
             ? ::testing::AssertionSuccess()
             : ::testing::AssertionFailure() << "'" << msg << "' lacks '" << part << "'";
}

// window_3d(x: desc<f32, [2, 4, 8]>, out: *f32, o0, o1, o2: i32): 6 + 1 + 3
// ABI values. Compiled once: every test edits a copy.
const tk::Bundle &window3d() {
  static const tk::Bundle b = tk::test::compileForSim(kFile, "window_3d", 4);
  return b;
}
constexpr size_t kWindowAbiValues = 10;

tk::Bundle withMaps(std::vector<tk::TensorMapParam> maps) {
  tk::Bundle b = window3d();
  b.tensorMaps = std::move(maps);
  return b;
}

// What the recording device saw at its last launch.
struct Recorded {
  size_t values = 0;
  std::vector<uintptr_t> mapAddresses;               // of the values after the first kWindowAbiValues
  std::vector<std::array<unsigned char, 128>> maps;  // their bytes
};
Recorded recorded;
bool failEncoding = false;

// A device that runs nothing: it keeps host memory, encodes maps as the sim
// does (or fails to, when told) and records what a launch passes.
class RecordingDevice final : public tk::DeviceImpl {
 public:
  std::string kind() const override { return "recording"; }
  std::string name() const override { return "recording device"; }
  uint64_t allocate(size_t bytes) override {
    return reinterpret_cast<uint64_t>(std::aligned_alloc(256, (bytes + 255) / 256 * 256));
  }
  void release(uint64_t address) override { std::free(reinterpret_cast<void *>(address)); }
  void copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  }
  void copyToHost(void *dst, uint64_t src, size_t bytes) override {
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
  }
  void fill(uint64_t, const void *, size_t, size_t) override {}
  std::shared_ptr<void> load(const tk::Bundle &) override { return std::make_shared<int>(0); }
  tk::LaunchStats launch(void *, const tk::Bundle &, tk::Dim3, const std::vector<const void *> &args,
                         const tk::LaunchOptions &, void *) override {
    recorded = {};
    recorded.values = args.size();
    for (size_t i = kWindowAbiValues; i < args.size(); ++i) {
      recorded.mapAddresses.push_back(reinterpret_cast<uintptr_t>(args[i]));
      recorded.maps.emplace_back();
      std::memcpy(recorded.maps.back().data(), args[i], 128);
    }
    return {};
  }
  void encodeTensorMap(const tk::detail::TensorMapSpec &s, void *out128) override {
    if (failEncoding) throw tk::Error("cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE (1)");
    tk::sim::TensorMap m = tk::sim::encodeTensorMap(s);
    std::memcpy(out128, &m, sizeof m);
  }
};

std::unique_ptr<tk::Device> openRecording() {
  static const bool registered = (tk::registerDevice("recording",
                                                     [](const std::string &) -> std::unique_ptr<tk::DeviceImpl> {
                                                       return std::make_unique<RecordingDevice>();
                                                     }),
                                  true);
  (void)registered;
  return tk::Device::open("recording");
}

tk::sim::TensorMap mapOf(const std::array<unsigned char, 128> &bytes) {
  tk::sim::TensorMap m;
  std::memcpy(&m, bytes.data(), sizeof m);
  return m;
}

// The map of a [4, 4, 16] f32 window with rows 16 apart and planes 256,
// box [2, 4, 8], swizzle 32, innermost first.
void expectWindowMap(const tk::sim::TensorMap &m, uint64_t base) {
  EXPECT_EQ(m.base, base);
  EXPECT_EQ(m.rank, 3u);
  EXPECT_EQ(m.elemBytes, 4u);
  EXPECT_EQ(m.swizzle, 32u);
  EXPECT_EQ(m.dims[0], 16u);
  EXPECT_EQ(m.dims[1], 4u);
  EXPECT_EQ(m.dims[2], 4u);
  EXPECT_EQ(m.strides[0], 4u);
  EXPECT_EQ(m.strides[1], 64u);
  EXPECT_EQ(m.strides[2], 1024u);
  EXPECT_EQ(m.box[0], 8u);
  EXPECT_EQ(m.box[1], 4u);
  EXPECT_EQ(m.box[2], 2u);
  EXPECT_EQ(m.magic, 0x544b4d50u);
}

TEST(TensorMaps, BundleRoundTripsThem) {
  EXPECT_EQ(window3d().toJson().find("tensor_maps"), std::string::npos);  // written only when there are some
  const tk::Bundle b = withMaps({{"x", {2, 4, 8}, 32}, {"x", {1, 2, 32}, 128}});
  const std::string json = b.toJson();
  EXPECT_NE(json.find("\"tensor_maps\""), std::string::npos);
  const tk::Bundle c = tk::Bundle::fromJson(json);
  ASSERT_EQ(c.tensorMaps.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(c.tensorMaps[i].param, "x");
    EXPECT_EQ(c.tensorMaps[i].box, b.tensorMaps[i].box);
    EXPECT_EQ(c.tensorMaps[i].swizzle, b.tensorMaps[i].swizzle);
  }
  EXPECT_EQ(c.toJson(), json);
  // The checksum covers them: a map edited in the file is refused.
  std::string edited = json;
  const std::string swizzle = "\"swizzle\": 128";
  const size_t at = edited.find(swizzle);
  ASSERT_NE(at, std::string::npos) << json;
  edited.replace(at, swizzle.size(), "\"swizzle\": 64");
  EXPECT_TRUE(has(tk::test::errorOf([&] { tk::Bundle::fromJson(edited); }), "checksum mismatch"));
}

// Each rule, in a file whose checksum matches (a hand-made bundle).
TEST(TensorMaps, FromJsonRefusesEveryBrokenRule) {
  auto refused = [](std::vector<tk::TensorMapParam> maps) {
    return tk::test::errorOf([&] { tk::Bundle::fromJson(withMaps(std::move(maps)).toJson(), "b.tkb"); });
  };
  EXPECT_EQ(refused({{"x", {2, 4, 8}, 0}, {"x", {2, 4, 8}, 32}, {"x", {256, 1, 4}, 0}}), "");
  EXPECT_TRUE(has(refused({{"z", {2, 4, 8}, 0}}), "b.tkb: tensor map 0 (of 'z'): the kernel has no parameter 'z'"));
  EXPECT_TRUE(has(refused({{"out", {2, 4, 8}, 0}}), "parameter 'out' (*f32) is not a desc<..> parameter"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 8}, 0}, {"x", {4, 8}, 0}}),
                  "tensor map 1 (of 'x'): box [4, 8] has 2 dims; its parameter 'x' (desc<f32,[2,4,8]>) has 3"));
  EXPECT_TRUE(has(refused({{"x", {0, 4, 8}, 0}}), "box[0] = 0 is not in [1, 256]"));
  EXPECT_TRUE(has(refused({{"x", {2, 257, 8}, 0}}), "box[1] = 257 is not in [1, 256]"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 6}, 0}}), "has an inner dim of 24 bytes, not a multiple of 16"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 16}, 32}}), "has an inner dim of 64 bytes, more than its swizzle of 32"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 8}, 48}}), "swizzle 48 is not 0, 32, 64 or 128 (bytes)"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 8}, -32}}), "swizzle -32 is not 0, 32, 64 or 128 (bytes)"));
  EXPECT_TRUE(has(refused({{"x", {2, 4, 8}, 256}}), "swizzle 256 is not 0, 32, 64 or 128 (bytes)"));
  // The JSON's shape, before anything else is read.
  auto fromText = [](const std::string &field) {
    std::string json = window3d().toJson();
    json.insert(json.find('{') + 1, field);
    return tk::test::errorOf([&] { tk::Bundle::fromJson(json, "b.tkb"); });
  };
  EXPECT_TRUE(has(fromText("\"tensor_maps\": 5,"), "b.tkb: field 'tensor_maps' has the wrong type"));
  EXPECT_TRUE(has(fromText("\"tensor_maps\": [7],"), "b.tkb: tensor map 0 is not an object"));
  EXPECT_TRUE(
      has(fromText("\"tensor_maps\": [{\"param\": \"x\", \"swizzle\": 0}],"), "tensor map 0: missing field 'box'"));
  EXPECT_TRUE(has(fromText("\"tensor_maps\": [{\"param\": \"x\", \"box\": [2, 4, 8], \"swizzle\": 4294967424}],"),
                  "swizzle 4294967424 is not 0, 32, 64 or 128"));
  // A const parameter is never a launch argument (no front end makes a
  // const descriptor: the check guards a bundle built in memory).
  tk::Bundle b = withMaps({{"x", {2, 4, 8}, 0}});
  b.params[0].isConst = true;
  EXPECT_TRUE(has(tk::test::errorOf([&] { tk::detail::tensorMapSource(b, b.tensorMaps[0]); }),
                  "parameter 'x' is const, not a launch argument"));
}

TEST(TensorMaps, SimEncodesEveryField) {
  tk::detail::TensorMapSpec s;
  s.base = 0x7f0012345600;
  s.elem = "f32";
  s.elemBytes = 4;
  s.rank = 3;
  const int64_t shape[] = {4, 4, 16}, strides[] = {256, 16, 1}, box[] = {2, 4, 8};
  for (size_t i = 0; i < 3; ++i) s.shape[i] = shape[i], s.strides[i] = strides[i], s.box[i] = box[i];
  s.swizzle = 32;
  const tk::sim::TensorMap m = tk::sim::encodeTensorMap(s);
  expectWindowMap(m, 0x7f0012345600);
  EXPECT_EQ(m.reserved, 0u);
  for (size_t i = 3; i < 5; ++i) {
    EXPECT_EQ(m.dims[i], 0u) << i;
    EXPECT_EQ(m.strides[i], 0u) << i;
    EXPECT_EQ(m.box[i], 0u) << i;
  }
  // A rank-1 map: its one stride is the element's size.
  s.elem = "f16", s.elemBytes = 2, s.rank = 1, s.shape[0] = 1000, s.strides[0] = 1, s.box[0] = 64, s.swizzle = 128;
  const tk::sim::TensorMap one = tk::sim::encodeTensorMap(s);
  EXPECT_EQ(one.rank, 1u);
  EXPECT_EQ(one.elemBytes, 2u);
  EXPECT_EQ(one.dims[0], 1000u);
  EXPECT_EQ(one.strides[0], 2u);
  EXPECT_EQ(one.box[0], 64u);
  EXPECT_EQ(one.dims[1], 0u);
  EXPECT_EQ(one.swizzle, 128u);
}

// Device::launch passes the ordinary values, then one map per entry, each
// 64-byte aligned and encoded from its descriptor (after the descriptor's
// own checks); an encoding that fails names the map and its argument.
TEST(TensorMaps, DeviceLaunchAppendsOneMapPerEntry) {
  auto dev = openRecording();
  tk::Buffer big = dev->alloc<float>(4096), out = dev->alloc<float>(64);
  const tk::TensorDescriptor window{big, {4, 4, 16}, {256, 16, 1}, {2, 4, 8}};
  auto launch = [&](const tk::Bundle &b, const tk::TensorDescriptor &d) {
    tk::Kernel k = dev->load(b);
    (*dev)(k, {1}, d, out, int32_t(0), int32_t(0), int32_t(0));
  };
  launch(window3d(), window);
  EXPECT_EQ(recorded.values, kWindowAbiValues);
  launch(withMaps({{"x", {2, 4, 8}, 32}, {"x", {1, 1, 4}, 0}}), window);
  ASSERT_EQ(recorded.values, kWindowAbiValues + 2);
  for (uintptr_t a : recorded.mapAddresses) EXPECT_EQ(a % 64, 0u);
  expectWindowMap(mapOf(recorded.maps[0]), big.address());
  const tk::sim::TensorMap second = mapOf(recorded.maps[1]);
  EXPECT_EQ(second.box[0], 4u);
  EXPECT_EQ(second.box[2], 1u);
  EXPECT_EQ(second.swizzle, 0u);
  // The descriptor is checked as before: no map is encoded from a bad one.
  recorded = {};
  EXPECT_TRUE(has(tk::test::errorOf([&] {
                    launch(withMaps({{"x", {2, 4, 8}, 32}}), {big, {4, 4, 16}, {256, 18, 1}, {2, 4, 8}});
                  }),
                  "strides[1] = 18"));
  EXPECT_EQ(recorded.values, 0u);
  failEncoding = true;
  const std::string msg = tk::test::errorOf([&] { launch(withMaps({{"x", {2, 4, 8}, 32}}), window); });
  failEncoding = false;
  EXPECT_TRUE(has(msg,
                  "launch of 'window_3d': tensor map 0 (of 'x'), argument 0 ('x', desc<f32,[2,4,8]>): "
                  "cuTensorMapEncodeTiled failed: CUDA_ERROR_INVALID_VALUE"));
}

// A generated launcher packs its descriptors with aot::descriptorArgs and
// launches through aot::Library::launch, which appends the variant's maps
// through the same function as Device::launch.
TEST(TensorMaps, GeneratedLauncherPathAppendsThem) {
  auto dev = openRecording();
  tk::Buffer big = dev->alloc<float>(4096), out = dev->alloc<float>(64);
  const std::string json = withMaps({{"x", {2, 4, 8}, 32}}).toJson();
  const tk::aot::EmbeddedBundle embedded{json.c_str(), json.size()};
  const uint64_t hash = 42;
  tk::aot::Library library("tensor_maps_test", hash, &embedded, 1);
  const tk::Stream s(*dev);
  uint64_t slots[6];
  ASSERT_TRUE(
      tk::aot::descriptorArgs(library, s, 0, "window_3d", "x", {big, {4, 4, 16}, {256, 16, 1}, {}}, slots).ok());
  const uint64_t outAddress = out.address();
  const int32_t o0 = 0, o1 = 0, o2 = 0;
  const void *args[] = {&slots[0], &slots[1], &slots[2], &slots[3], &slots[4], &slots[5], &outAddress, &o0, &o1, &o2};
  const tk::Status st = library.launch(s, hash, "window_3d", 0, {1}, args, kWindowAbiValues);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_EQ(recorded.values, kWindowAbiValues + 1);
  EXPECT_EQ(recorded.mapAddresses[0] % 64, 0u);
  expectWindowMap(mapOf(recorded.maps[0]), big.address());
  failEncoding = true;
  const tk::Status failed = library.launch(s, hash, "window_3d", 0, {1}, args, kWindowAbiValues);
  failEncoding = false;
  EXPECT_EQ(failed.code(), tk::StatusCode::InvalidArgument);
  EXPECT_TRUE(has(failed.message(), "window_3d: tensor map 0 (of 'x'), argument 0 ('x', desc<f32,[2,4,8]>): "));
}

}  // namespace
