// DLPack export and import share memory and run each owner's deleter once; from_blob's too; the
// error kinds Python maps to IndexError and ValueError.
#include <dlpack/dlpack.h>
#include <gtest/gtest.h>

#include "ember/core/dlpack.h"
#include "ember/ops/factory.h"
#include "tests/util/test_util.h"

namespace ember {
namespace {

using namespace ember::testing;

TEST(DLPack, RoundTripSharesMemory) {
  Tensor x = arange(12.0).reshape({3, 4}).transpose(0, 1);  // strided, not contiguous
  DLManagedTensor* m = to_dlpack(x);
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 4);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  Tensor y = from_dlpack(m);  // takes m
  EXPECT_EQ(y.sizes(), x.sizes());
  EXPECT_EQ(y.strides(), x.strides());
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  y.fill_(Scalar(3.0));
  EXPECT_EQ(values(x), std::vector<double>(12, 3.0));
  std::weak_ptr<StorageImpl> storage = x.storage();
  x = Tensor();
  EXPECT_FALSE(storage.expired());  // y's DLPack owner keeps it
  y = Tensor();
  EXPECT_TRUE(storage.expired());
}

TEST(DLPack, UnsupportedTypesAreErrorsThatLeaveTheTensorToTheCaller) {
  Tensor x = ones({2});
  DLManagedTensor* m = to_dlpack(x);
  m->dl_tensor.dtype = {kDLUInt, 16, 1};  // uint16: ember has no such dtype
  EXPECT_THROW(from_dlpack(m), Error);
  m->dl_tensor.dtype = {kDLFloat, 32, 1};
  m->dl_tensor.device.device_type = kDLOpenCL;
  EXPECT_THROW(from_dlpack(m), Error);
  m->deleter(m);
}

TEST(FromBlob, RunsTheDeleterOnceWhenTheLastViewIsGone) {
  std::vector<float> data{1, 2, 3, 4, 5, 6};
  int deleted = 0;
  Tensor t = from_blob(data.data(), {2, 3}, {3, 1}, kFloat32, Device(kCPU, 0), [&] { ++deleted; });
  Tensor row = t.select(0, 1);
  EXPECT_EQ(values(row), (std::vector<double>{4, 5, 6}));
  t = Tensor();
  EXPECT_EQ(deleted, 0);
  row = Tensor();
  EXPECT_EQ(deleted, 1);
  EXPECT_THROW(from_blob(data.data(), {2}, {-1}, kFloat32, Device(kCPU, 0), nullptr), Error);
}

TEST(ErrorKinds, IndexAndValueErrorsAreEmberErrors) {
  EXPECT_THROW(ones({2}).select(0, 2), IndexError);
  EXPECT_THROW(ones({2}).sum({3}), IndexError);
  try {
    ones({2}).transpose(0, 4);
    FAIL();
  } catch (const Error& e) {  // still an ember::Error for C++ callers
    EXPECT_NE(std::string(e.what()).find("dimension out of range"), std::string::npos);
  }
}

}  // namespace
}  // namespace ember
