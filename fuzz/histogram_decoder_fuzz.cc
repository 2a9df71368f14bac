// libFuzzer target for the histogram decoder: any bytes that parse as a Histogram message must
// decode to a valid histogram or to an error, and a decoded histogram must re-encode to itself.
#include <cstddef>
#include <cstdint>

#include "base/histogram.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  dbload::v1::Histogram proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  absl::StatusOr<dbload::Histogram> decoded = dbload::Histogram::FromProto(proto);
  if (!decoded.ok()) return 0;
  // Statistics must be computable on anything the decoder accepts.
  (void)decoded->Mean();
  (void)decoded->Stddev();
  if (decoded->ValueAtPercentile(50) > decoded->Max()) __builtin_trap();
  dbload::v1::Histogram again;
  decoded->ToProto(&again);
  absl::StatusOr<dbload::Histogram> redecoded = dbload::Histogram::FromProto(again);
  if (!redecoded.ok() || !(*redecoded == *decoded)) __builtin_trap();
  return 0;
}
