#include "services/alignment/calibrated_scores.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "services/alignment/text_encoder.h"

namespace ibgraphrag::alignment {

QuestionNull QuestionNullOf(const AlignmentBundle& bundle, const float* question) {
  const int64_t refs = bundle.manifest.calibration.reference_entries;
  const int dim = bundle.manifest.dim;
  QuestionNull null;
  if (refs <= 0 || dim <= 0) return null;
  if (bundle.reference_mean.size() == static_cast<size_t>(dim) &&
      bundle.reference_covariance.size() == static_cast<size_t>(dim) * dim) {
    // The cosines q.r of the reference rows have mean q.m and variance q^T C q (m, C: the rows'
    // mean and covariance, bundle.h): dim dot products of dim instead of refs.
    null.mean = Dot(bundle.reference_mean.data(), question, dim);
    double variance = 0;
    for (int i = 0; i < dim; ++i) {
      variance +=
          static_cast<double>(question[i]) *
          Dot(bundle.reference_covariance.data() + static_cast<size_t>(i) * dim, question, dim);
    }
    null.sd = std::sqrt(std::max(0.0, variance));
    return null;
  }
  double sum = 0, sum2 = 0;
  for (int64_t r = 0; r < refs; ++r) {
    const double cos = Dot(bundle.reference_enriched.data() + r * dim, question, dim);
    sum += cos;
    sum2 += cos * cos;
  }
  null.mean = sum / refs;
  null.sd = std::sqrt(std::max(0.0, sum2 / refs - null.mean * null.mean));
  return null;
}

float ScaleZ(double raw, double mean, double sd, double full_z) {
  if (!(sd > 1e-6) || !(full_z > 0)) return 0.0f;
  return static_cast<float>(std::clamp((raw - mean) / sd / full_z, 0.0, 1.0));
}

float CalibratedS(double raw, const QuestionNull& null, float question_full_z,
                  float dictionary_evidence, bool dictionary_match, bool lookalike) {
  const float s = ScaleZ(raw, null.mean, null.sd, question_full_z);
  if (dictionary_match) return std::max(s, dictionary_evidence);
  if (lookalike) return s * (1.0f - dictionary_evidence);
  return s;
}

float CalibratedR(double raw, float null_mean, float null_sd, float relatedness_full_z,
                  size_t candidates) {
  return candidates > 1 ? ScaleZ(raw, null_mean, null_sd, relatedness_full_z) : 0.0f;
}

}  // namespace ibgraphrag::alignment
