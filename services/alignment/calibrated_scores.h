// MSCA's calibrated evidence scale (ScoreCalibration in bundle.h; docs/alignment.md "Score
// calibration"): the formulas Aligner::Align scores with, public so that the tools that replay
// them for other constants (alignment_msca_fit) or score other entities like candidates
// (alignment_eval) compute them float for float instead of keeping copies.
#ifndef IBGRAPHRAG_SERVICES_ALIGNMENT_CALIBRATED_SCORES_H_
#define IBGRAPHRAG_SERVICES_ALIGNMENT_CALIBRATED_SCORES_H_

#include <cstddef>

#include "services/alignment/bundle.h"

namespace ibgraphrag::alignment {

// The question's cosines with the bundle's reference entries, the null distribution that
// calibrates S: their mean and population standard deviation (zeros without references).
struct QuestionNull {
  double mean = 0;
  double sd = 0;
};
// `question`: the question's embedding, bundle.manifest.dim floats.
QuestionNull QuestionNullOf(const AlignmentBundle& bundle, const float* question);

// A raw score as its z-score against a null distribution, scaled so `full_z` maps to 1, clamped
// to [0, 1]; 0 when the null has no spread or full_z is not positive.
float ScaleZ(double raw, double mean, double sd, double full_z);

// Calibrated S of a candidate with raw cosine `raw` to the question. A candidate its mention
// names in the dictionary (`dictionary_match`) gets at least `dictionary_evidence`, however long
// the question (a long vignette dilutes its vector); a look-alike found for words that name
// another entity keeps 1 - dictionary_evidence of its S ("type 1 diabetes" when the question
// says "type 2 diabetes").
float CalibratedS(double raw, const QuestionNull& null, float question_full_z,
                  float dictionary_evidence, bool dictionary_match, bool lookalike);

// Calibrated R of a candidate with raw mean cosine `raw` to the other candidates, against the
// bundle's random-pair null; 0 when it is the only one of `candidates`.
float CalibratedR(double raw, float null_mean, float null_sd, float relatedness_full_z,
                  size_t candidates);

// C = (1 - lambda) S + lambda R.
inline float Consistency(float s, float r, float lambda) {
  return (1.0f - lambda) * s + lambda * r;
}

}  // namespace ibgraphrag::alignment

#endif  // IBGRAPHRAG_SERVICES_ALIGNMENT_CALIBRATED_SCORES_H_
