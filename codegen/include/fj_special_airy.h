/*
 * fj_special_airy.h -- scipy.special.airy and airye of real x: Ai, Ai', Bi, Bi' (and their
 * exponentially scaled forms), for fusejit's generated C (and CUDA: device functions). After
 * fj_special_kv.h and fj_special_jy.h, whose Bessel functions of order 1/3 and 2/3 they are
 * away from 0. Doubles; float32 operands are computed in double and rounded, as SciPy's.
 *
 * -2 <= x <= 1: the Maclaurin series Ai = c1 f - c2 g, Bi = sqrt(3) (c1 f + c2 g) (A&S
 * 10.4.2-3; c1 = Ai(0), c2 = -Ai'(0); f, g and their derivatives summed to 1e-17).
 * x > 1, zeta = (2/3) x^(3/2) (A&S 10.4.14-17 with I_-v = I_v + (2/pi) sin(v pi) K_v):
 *   Ai = sqrt(x/3) K_1/3(zeta) / pi, Ai' = -x K_2/3(zeta) / (pi sqrt 3),
 *   Bi = 2 sqrt(x/3) I_1/3(zeta) + sqrt(x) K_1/3(zeta) / pi,
 *   Bi' = 2 x I_2/3(zeta) / sqrt 3 + x K_2/3(zeta) / pi (scaled: kve and ive).
 * x < -2, t = -x (A&S 10.4.15-16 with J_-v, Y_-v reflected):
 *   Ai = (sqrt t / 2)(J_1/3 - Y_1/3 / sqrt 3), Bi = -(sqrt t / 2)(J_1/3 / sqrt 3 + Y_1/3),
 *   Ai' = (t / 2)(J_2/3 + Y_2/3 / sqrt 3), Bi' = (t / 2)(J_2/3 / sqrt 3 - Y_2/3).
 * SciPy 1.17's special values and limits: NaN at +-inf and NaN, and beyond
 * |x| = (2^30 - 1/2)^(2/3) ~ 1048576 (AMOS's limit); airy's Ai, Ai' are 0 from x ~ 103.097
 * and its Bi, Bi' NaN from x ~ 103.283 (AMOS's underflow and overflow tests); airye of
 * x < 0 has NaN Ai, Ai' and Bi, Bi' unscaled.
 * For large |x| < 0 the phase zeta is rounded to eps zeta, in SciPy's as here: the two agree
 * to ~1e-16 zeta of the amplitude there.
 */
#ifndef FJ_SPECIAL_AIRY_H
#define FJ_SPECIAL_AIRY_H

#define FJ_AIRY_C1 0.35502805388781723926
#define FJ_AIRY_C2 0.25881940379280679840
#define FJ_AIRY_SQRT3 1.7320508075688772935
#define FJ_AIRY_LIMIT 1048575.9996744783
/* airy's Ai, Ai' are 0 above these and Bi, Bi' NaN above the last (SciPy 1.17's AMOS's
 * underflow and overflow tests, measured) */
#define FJ_AIRY_AI_UNDER 103.09682650112121
#define FJ_AIRY_AIP_UNDER 103.09684998811501
#define FJ_AIRY_BI_OVER 103.2827799460052

/* r = {Ai, Ai', Bi, Bi'}; scaled: airye's */
static inline void fj_sp_airy_all(double x, int scaled, double *r) {
    if (isnan(x) || fabs(x) > FJ_AIRY_LIMIT) {
        r[0] = r[1] = r[2] = r[3] = NAN;
        return;
    }
    if (x >= -2.0 && x <= 1.0) {
        const double x3 = x * x * x;
        double f = 1.0, fp = 0.0, g = x, gp = 1.0;
        double tf = 1.0, tfp = 0.5 * x * x, tg = x, tgp = 1.0;
        fp = tfp;
        for (int k = 0; k < 60; k++) {
            const double k3 = 3.0 * k;
            tf *= x3 / ((k3 + 2.0) * (k3 + 3.0));
            tfp *= x3 / ((k3 + 3.0) * (k3 + 5.0));
            tg *= x3 / ((k3 + 3.0) * (k3 + 4.0));
            tgp *= x3 / ((k3 + 1.0) * (k3 + 3.0));
            f += tf;
            fp += tfp;
            g += tg;
            gp += tgp;
            if (fabs(tf) + fabs(tfp) + fabs(tg) + fabs(tgp) < 1e-17) break;
        }
        r[0] = FJ_AIRY_C1 * f - FJ_AIRY_C2 * g;
        r[1] = FJ_AIRY_C1 * fp - FJ_AIRY_C2 * gp;
        r[2] = FJ_AIRY_SQRT3 * (FJ_AIRY_C1 * f + FJ_AIRY_C2 * g);
        r[3] = FJ_AIRY_SQRT3 * (FJ_AIRY_C1 * fp + FJ_AIRY_C2 * gp);
        if (scaled && x < 0.0) {
            r[0] = r[1] = NAN;
        } else if (scaled) {
            const double zeta = 2.0 / 3.0 * x * sqrt(x), up = exp(zeta), down = exp(-zeta);
            r[0] *= up;
            r[1] *= up;
            r[2] *= down;
            r[3] *= down;
        }
        return;
    }
    if (x > 0.0) {
        const double s = sqrt(x), zeta = 2.0 / 3.0 * x * s;
        const double k1 = fj_sp_kv_any(1.0 / 3.0, zeta, scaled);
        const double k2 = fj_sp_kv_any(2.0 / 3.0, zeta, scaled);
        /* (scaled: K e^zeta, I e^-zeta; Bi's K term then carries e^-2 zeta) */
        const double kb = scaled ? exp(-2.0 * zeta) : 1.0;
        r[0] = s * k1 / (FJ_SP_PI * FJ_AIRY_SQRT3);
        r[1] = -x * k2 / (FJ_SP_PI * FJ_AIRY_SQRT3);
        r[2] = 2.0 * s / FJ_AIRY_SQRT3 * fj_sp__iv_any(1.0 / 3.0, zeta, scaled) +
               s * k1 * kb / FJ_SP_PI;
        r[3] = 2.0 * x / FJ_AIRY_SQRT3 * fj_sp__iv_any(2.0 / 3.0, zeta, scaled) +
               x * k2 * kb / FJ_SP_PI;
        if (!scaled) {  /* (SciPy's limits: see above) */
            if (x > FJ_AIRY_AI_UNDER) r[0] = 0.0;
            if (x > FJ_AIRY_AIP_UNDER) r[1] = 0.0;
            if (x > FJ_AIRY_BI_OVER) r[2] = r[3] = NAN;
        }
        return;
    }
    const double t = -x, s = sqrt(t), zeta = 2.0 / 3.0 * t * s;
    const double j1 = fj_sp_jv(1.0 / 3.0, zeta), y1 = fj_sp_yv(1.0 / 3.0, zeta);
    const double j2 = fj_sp_jv(2.0 / 3.0, zeta), y2 = fj_sp_yv(2.0 / 3.0, zeta);
    r[0] = scaled ? NAN : 0.5 * s * (j1 - y1 / FJ_AIRY_SQRT3);
    r[1] = scaled ? NAN : 0.5 * t * (j2 + y2 / FJ_AIRY_SQRT3);
    r[2] = -0.5 * s * (j1 / FJ_AIRY_SQRT3 + y1);
    r[3] = 0.5 * t * (j2 / FJ_AIRY_SQRT3 - y2);
}

static inline double fj_sp_airy_ai(double x) { double r[4]; fj_sp_airy_all(x, 0, r); return r[0]; }
static inline double fj_sp_airy_aip(double x) { double r[4]; fj_sp_airy_all(x, 0, r); return r[1]; }
static inline double fj_sp_airy_bi(double x) { double r[4]; fj_sp_airy_all(x, 0, r); return r[2]; }
static inline double fj_sp_airy_bip(double x) { double r[4]; fj_sp_airy_all(x, 0, r); return r[3]; }
static inline double fj_sp_airye_ai(double x) { double r[4]; fj_sp_airy_all(x, 1, r); return r[0]; }
static inline double fj_sp_airye_aip(double x) { double r[4]; fj_sp_airy_all(x, 1, r); return r[1]; }
static inline double fj_sp_airye_bi(double x) { double r[4]; fj_sp_airy_all(x, 1, r); return r[2]; }
static inline double fj_sp_airye_bip(double x) { double r[4]; fj_sp_airy_all(x, 1, r); return r[3]; }

#endif
