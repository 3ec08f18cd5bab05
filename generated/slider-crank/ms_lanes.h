/* mechsym C runtime: blocks of MS_LANES samples stored structure-of-arrays (V(i) is coordinate i of lane l),
   the loop pragmas that vectorise them where the build defines MS_SIMD (-fopenmp-simd), and the sines and
   cosines of the lanes (MS_SIN_COS). Included by a generated source before its lane functions
   (mechsym.codegen.c_lanes). */
#ifndef MS_LANES_H
#define MS_LANES_H
#define MS_LANES 8
#define V(i) ((i) * MS_LANES + l)
#if defined(MS_SIMD)
#define MS_SIMD_LOOP _Pragma("omp simd")
#define MS_SIMD_LOOP_BAD _Pragma("omp simd reduction(|:bad)")
#define MS_SIMD_LOOP_WIDE _Pragma("omp simd reduction(|:wide)")
#else
#define MS_SIMD_LOOP_WIDE
#define MS_SIMD_LOOP
#define MS_SIMD_LOOP_BAD
#endif

/* sin x and cos x for |x| <= MS_TRIG_MAX, branch-free so that a loop over lanes vectorises: x = k pi/2 + r
   with r from pi/2 in three parts (fdlibm's pio2_1, pio2_2, pio2_3; k pio2_1 and k pio2_2 are exact for
   |k| < 2^20), then fdlibm's kernel polynomials on |r| <= pi/4: an absolute error below 2^-52 against libm
   (tests/test_lanes.py; relative to a value near a zero of sin or cos the error is larger, as the reduction
   keeps 2^-52 of r absolute, which is what the mechanism's equations see). k is rounded by adding and
   subtracting 1.5 2^52 (no rounding function, no integer overflow). */
#define MS_TRIG_MAX 1.0e5
#define MS_SIN_COS(X, S, C) do {                                                                            \
    const double x_ = (X), big_ = 6755399441055744.0;                                                       \
    const double k_ = (x_ * 6.36619772367581382433e-01 + big_) - big_;                                      \
    const double r_ = ((x_ - k_ * 1.57079632673412561417e+00) - k_ * 6.07710050630396597660e-11)            \
                      - k_ * 2.02226624871116645580e-21;                                                    \
    const double z_ = r_ * r_, hz_ = 0.5 * z_, w_ = 1.0 - hz_;                                              \
    const double s_ = r_ + r_ * z_ * (-1.66666666666666324348e-01 + z_ * (8.33333333332248946124e-03 + z_ * ( \
                      -1.98412698298579493134e-04 + z_ * (2.75573137070700676789e-06 + z_ * (               \
                      -2.50507602534068634195e-08 + z_ * 1.58969099521155010221e-10)))));                   \
    const double c_ = w_ + (((1.0 - w_) - hz_) + z_ * z_ * (4.16666666666666019037e-02 + z_ * (             \
                      -1.38888888888741095749e-03 + z_ * (2.48015872894767294178e-05 + z_ * (               \
                      -2.75573143513906633035e-07 + z_ * (2.08757232129817482790e-09                        \
                      + z_ * -1.13596475577881948265e-11))))));                                             \
    const double m_ = k_ - 4.0 * ((k_ * 0.25 + big_) - big_);  /* k mod 4, in -2..2 */                     \
    const double ss_ = (m_ == 1.0 || m_ == -1.0) ? c_ : s_, cc_ = (m_ == 1.0 || m_ == -1.0) ? s_ : c_;     \
    (S) = (m_ == 2.0 || m_ == -2.0 || m_ == -1.0) ? -ss_ : ss_;                                             \
    (C) = (m_ == 2.0 || m_ == -2.0 || m_ == 1.0) ? -cc_ : cc_;                                              \
  } while (0)
#endif
