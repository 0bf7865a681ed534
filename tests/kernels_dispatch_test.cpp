// ISA names, CPU support and the TICKINFER_ISA override.
#include <cstdlib>

#include "kernels/kernel_set.hpp"
#include "kernels_test_support.hpp"
#include "tickinfer/error.hpp"

namespace tickinfer::kernels {
namespace {

// Sets TICKINFER_ISA for one scope and restores the previous value after.
class ScopedIsaEnv {
 public:
  explicit ScopedIsaEnv(const char* value) {
    if (const char* old = std::getenv("TICKINFER_ISA")) old_ = old, had_ = true;
    if (value) setenv("TICKINFER_ISA", value, 1); else unsetenv("TICKINFER_ISA");
  }
  ~ScopedIsaEnv() {
    if (had_) setenv("TICKINFER_ISA", old_.c_str(), 1); else unsetenv("TICKINFER_ISA");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(KernelsDispatch, NamesRoundTrip) {
  for (Isa isa : {Isa::Scalar, Isa::Portable, Isa::Avx2, Isa::Avx512})
    EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  EXPECT_STREQ(isa_name(Isa::Portable), "portable");
  EXPECT_STREQ(isa_name(Isa::Avx512), "avx512");
  EXPECT_THROW(parse_isa("sse9"), Error);
  EXPECT_THROW(parse_isa(""), Error);
}

TEST(KernelsDispatch, ScalarAndPortableAreAlwaysAvailable) {
  EXPECT_TRUE(isa_supported(Isa::Scalar));
  EXPECT_EQ(kernel_set(Isa::Scalar).isa, Isa::Scalar);
  EXPECT_STREQ(kernel_set(Isa::Scalar).name, "scalar");
  EXPECT_TRUE(isa_supported(Isa::Portable));
  EXPECT_EQ(kernel_set(Isa::Portable).isa, Isa::Portable);
  EXPECT_STREQ(kernel_set(Isa::Portable).name, "portable");
}

TEST(KernelsDispatch, EachSupportedSetReportsItsIsaAndUnsupportedOnesThrow) {
  for (Isa isa : testing::kOptimizedIsas) {
    if (isa_supported(isa)) {
      const KernelSet& ks = kernel_set(isa);
      EXPECT_EQ(ks.isa, isa);
      EXPECT_STREQ(ks.name, isa_name(isa));
      EXPECT_NE(ks.gemv, nullptr);
      EXPECT_NE(ks.affine, nullptr);
    } else {
      EXPECT_THROW(kernel_set(isa), Error) << isa_name(isa);
    }
  }
}

TEST(KernelsDispatch, BestIsaPrefersTheWidestSupportedWithoutOverride) {
  ScopedIsaEnv env(nullptr);
  const Isa best = best_isa();
  EXPECT_TRUE(isa_supported(best));
  if (isa_supported(Isa::Avx512)) {
    EXPECT_EQ(best, Isa::Avx512);
  } else if (isa_supported(Isa::Avx2)) {
    EXPECT_EQ(best, Isa::Avx2);
  } else {
    EXPECT_EQ(best, Isa::Portable);  // never scalar unless forced
  }
  EXPECT_NE(best, Isa::Scalar);
}

TEST(KernelsDispatch, BestIsaHonoursTheEnvironmentOverride) {
  {
    ScopedIsaEnv env("scalar");
    EXPECT_EQ(best_isa(), Isa::Scalar);
  }
  for (Isa isa : testing::kOptimizedIsas) {
    ScopedIsaEnv env(isa_name(isa));
    if (isa_supported(isa)) {
      EXPECT_EQ(best_isa(), isa);
    }
    else EXPECT_THROW(best_isa(), Error) << "forcing an unsupported ISA must fail";
  }
  {
    ScopedIsaEnv env("neon");
    EXPECT_THROW(best_isa(), Error);
  }
}

}  // namespace
}  // namespace tickinfer::kernels
