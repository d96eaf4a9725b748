/*
 * Derivative-free minimisation (Nelder-Mead simplex) over a box, for fitting a few model
 * parameters to measurements. The search runs in the unit cube; each coordinate maps to its
 * parameter linearly or logarithmically, and points are clamped into the box. Deterministic.
 */
#ifndef FABRICSIM_CALIBRATION_NELDER_MEAD_H
#define FABRICSIM_CALIBRATION_NELDER_MEAD_H

#include <functional>
#include <string>
#include <vector>

namespace fabricsim
{

/// One parameter being fitted.
struct FitDimension
{
    std::string name;
    double lo = 0;
    double hi = 1;
    double start = 0.5;
    bool logScale = false; ///< search log(value) (lo must be > 0)
};

/// Outcome of a fit.
struct FitResult
{
    std::vector<double> best;
    double value = 0;
    int evaluations = 0;
    std::vector<std::pair<std::vector<double>, double>> history; ///< every evaluation
};

/**
 * Minimise \p f over the box of \p dims from their start values, for at most \p maxEvals
 * evaluations or until the simplex's values differ by less than \p tolerance.
 */
FitResult NelderMead(const std::vector<FitDimension>& dims,
                     const std::function<double(const std::vector<double>&)>& f,
                     int maxEvals = 60,
                     double tolerance = 1e-3);

} // namespace fabricsim

#endif
