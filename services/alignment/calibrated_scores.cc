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
  if (refs <= 0 || dim <= 0 || bundle.reference_mean.size() != static_cast<size_t>(dim) ||
      bundle.reference_second_moment.size() != static_cast<size_t>(dim) * dim) {
    return null;
  }
  // The cosines q.r of the reference rows r have mean q.m and mean square q^T M q (m, M: the
  // rows' mean and second moment, bundle.h): dim dot products of dim, a quarter of the
  // multiply-adds and memory of one per reference row.
  null.mean = Dot(bundle.reference_mean.data(), question, dim);
  double mean_square = 0;
  for (int i = 0; i < dim; ++i) {
    mean_square +=
        static_cast<double>(question[i]) *
        Dot(bundle.reference_second_moment.data() + static_cast<size_t>(i) * dim, question, dim);
  }
  null.sd = std::sqrt(std::max(0.0, mean_square - null.mean * null.mean));
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
