/* Example for hyq: evaluates the generated functions at NS states (q, v) written
   below and prints CSV blocks, each after a line "# name: columns": the states, the mass matrix H
   (row-major), the bias C(q, v) v + g(q), and for each contact frame its Jacobian (6 x HYQ_NV row-major, linear rows first) and its
   bias (classical acceleration of its origin at zero joint accelerations), with the default parameters. */
#include <stdio.h>
#include "hyq.h"

enum { NS = 3 };
static const double q[NS * HYQ_NQ] = {
    0.0, 0.0, 0.5775, 0.0, 0.0, 0.0, 1.0, -0.2, 0.75, -1.5, -0.2, -0.75, 1.5, -0.2, 0.75, -1.5, -0.2, -0.75, 1.5,
    0.0, 0.0, 0.5775, 0.6, 0.0, 0.0, 0.8, -0.2, 0.55, -1.35, -0.25, -1.0, 1.6, -0.30000000000000004, 1.0, -1.45, -0.35, -0.55, 1.5,
    0.0, 0.0, 0.5775, 0.5, 0.5, 0.5, 0.5, 0.09999999999999998, 0.75, -1.8, -0.1, -0.95, 1.7, -0.30000000000000004, 1.05, -1.5, -0.5, -0.65, 1.3};
static const double v[NS * HYQ_NV] = {
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    -1.5, -0.25, 1.0, -1.0, 0.25, 1.5, -0.5, 0.75, -1.25, 0.0, 1.25, -0.75, 0.5, -1.5, -0.25, 1.0, -1.0, 0.25,
    -2.0, 0.0, 2.0, -0.5, 1.5, -1.0, 1.0, -1.5, 0.5, -2.0, 0.0, 2.0, -0.5, 1.5, -1.0, 1.0, -1.5, 0.5};

int main(void) {
  static double a[NS * HYQ_NV], out[NS * 324];
  printf("# state: state,base.x,base.y,base.z,base.qx,base.qy,base.qz,base.qw,lf_haa_joint,lf_hfe_joint,lf_kfe_joint,lh_haa_joint,lh_hfe_joint,lh_kfe_joint,rf_haa_joint,rf_hfe_joint,rf_kfe_joint,rh_haa_joint,rh_hfe_joint,rh_kfe_joint,v.base.vx,v.base.vy,v.base.vz,v.base.wx,v.base.wy,v.base.wz,v.lf_haa_joint,v.lf_hfe_joint,v.lf_kfe_joint,v.lh_haa_joint,v.lh_hfe_joint,v.lh_kfe_joint,v.rf_haa_joint,v.rf_hfe_joint,v.rf_kfe_joint,v.rh_haa_joint,v.rh_hfe_joint,v.rh_kfe_joint\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < HYQ_NQ; ++i) printf(",%.17g", q[s * HYQ_NQ + i]);
    for (int i = 0; i < HYQ_NV; ++i) printf(",%.17g", v[s * HYQ_NV + i]);
    printf("\n");
  }
  hyq_mass(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# mass: state,H0.0,H0.1,H0.2,H0.3,H0.4,H0.5,H0.6,H0.7,H0.8,H0.9,H0.10,H0.11,H0.12,H0.13,H0.14,H0.15,H0.16,H0.17,H1.0,H1.1,H1.2,H1.3,H1.4,H1.5,H1.6,H1.7,H1.8,H1.9,H1.10,H1.11,H1.12,H1.13,H1.14,H1.15,H1.16,H1.17,H2.0,H2.1,H2.2,H2.3,H2.4,H2.5,H2.6,H2.7,H2.8,H2.9,H2.10,H2.11,H2.12,H2.13,H2.14,H2.15,H2.16,H2.17,H3.0,H3.1,H3.2,H3.3,H3.4,H3.5,H3.6,H3.7,H3.8,H3.9,H3.10,H3.11,H3.12,H3.13,H3.14,H3.15,H3.16,H3.17,H4.0,H4.1,H4.2,H4.3,H4.4,H4.5,H4.6,H4.7,H4.8,H4.9,H4.10,H4.11,H4.12,H4.13,H4.14,H4.15,H4.16,H4.17,H5.0,H5.1,H5.2,H5.3,H5.4,H5.5,H5.6,H5.7,H5.8,H5.9,H5.10,H5.11,H5.12,H5.13,H5.14,H5.15,H5.16,H5.17,H6.0,H6.1,H6.2,H6.3,H6.4,H6.5,H6.6,H6.7,H6.8,H6.9,H6.10,H6.11,H6.12,H6.13,H6.14,H6.15,H6.16,H6.17,H7.0,H7.1,H7.2,H7.3,H7.4,H7.5,H7.6,H7.7,H7.8,H7.9,H7.10,H7.11,H7.12,H7.13,H7.14,H7.15,H7.16,H7.17,H8.0,H8.1,H8.2,H8.3,H8.4,H8.5,H8.6,H8.7,H8.8,H8.9,H8.10,H8.11,H8.12,H8.13,H8.14,H8.15,H8.16,H8.17,H9.0,H9.1,H9.2,H9.3,H9.4,H9.5,H9.6,H9.7,H9.8,H9.9,H9.10,H9.11,H9.12,H9.13,H9.14,H9.15,H9.16,H9.17,H10.0,H10.1,H10.2,H10.3,H10.4,H10.5,H10.6,H10.7,H10.8,H10.9,H10.10,H10.11,H10.12,H10.13,H10.14,H10.15,H10.16,H10.17,H11.0,H11.1,H11.2,H11.3,H11.4,H11.5,H11.6,H11.7,H11.8,H11.9,H11.10,H11.11,H11.12,H11.13,H11.14,H11.15,H11.16,H11.17,H12.0,H12.1,H12.2,H12.3,H12.4,H12.5,H12.6,H12.7,H12.8,H12.9,H12.10,H12.11,H12.12,H12.13,H12.14,H12.15,H12.16,H12.17,H13.0,H13.1,H13.2,H13.3,H13.4,H13.5,H13.6,H13.7,H13.8,H13.9,H13.10,H13.11,H13.12,H13.13,H13.14,H13.15,H13.16,H13.17,H14.0,H14.1,H14.2,H14.3,H14.4,H14.5,H14.6,H14.7,H14.8,H14.9,H14.10,H14.11,H14.12,H14.13,H14.14,H14.15,H14.16,H14.17,H15.0,H15.1,H15.2,H15.3,H15.4,H15.5,H15.6,H15.7,H15.8,H15.9,H15.10,H15.11,H15.12,H15.13,H15.14,H15.15,H15.16,H15.17,H16.0,H16.1,H16.2,H16.3,H16.4,H16.5,H16.6,H16.7,H16.8,H16.9,H16.10,H16.11,H16.12,H16.13,H16.14,H16.15,H16.16,H16.17,H17.0,H17.1,H17.2,H17.3,H17.4,H17.5,H17.6,H17.7,H17.8,H17.9,H17.10,H17.11,H17.12,H17.13,H17.14,H17.15,H17.16,H17.17\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 324; ++i) printf(",%.17g", out[s * 324 + 0 + i]);
    printf("\n");
  }
  hyq_bias(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# bias: state,base.vx,base.vy,base.vz,base.wx,base.wy,base.wz,lf_haa_joint,lf_hfe_joint,lf_kfe_joint,lh_haa_joint,lh_hfe_joint,lh_kfe_joint,rf_haa_joint,rf_hfe_joint,rf_kfe_joint,rh_haa_joint,rh_hfe_joint,rh_kfe_joint\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 18; ++i) printf(",%.17g", out[s * 18 + 0 + i]);
    printf("\n");
  }
  hyq_frame4(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# jacobian.lf_foot: state,J0.0,J0.1,J0.2,J0.3,J0.4,J0.5,J0.6,J0.7,J0.8,J0.9,J0.10,J0.11,J0.12,J0.13,J0.14,J0.15,J0.16,J0.17,J1.0,J1.1,J1.2,J1.3,J1.4,J1.5,J1.6,J1.7,J1.8,J1.9,J1.10,J1.11,J1.12,J1.13,J1.14,J1.15,J1.16,J1.17,J2.0,J2.1,J2.2,J2.3,J2.4,J2.5,J2.6,J2.7,J2.8,J2.9,J2.10,J2.11,J2.12,J2.13,J2.14,J2.15,J2.16,J2.17,J3.0,J3.1,J3.2,J3.3,J3.4,J3.5,J3.6,J3.7,J3.8,J3.9,J3.10,J3.11,J3.12,J3.13,J3.14,J3.15,J3.16,J3.17,J4.0,J4.1,J4.2,J4.3,J4.4,J4.5,J4.6,J4.7,J4.8,J4.9,J4.10,J4.11,J4.12,J4.13,J4.14,J4.15,J4.16,J4.17,J5.0,J5.1,J5.2,J5.3,J5.4,J5.5,J5.6,J5.7,J5.8,J5.9,J5.10,J5.11,J5.12,J5.13,J5.14,J5.15,J5.16,J5.17\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 108; ++i) printf(",%.17g", out[s * 114 + 0 + i]);
    printf("\n");
  }
  printf("# frame_bias.lf_foot: state,ax,ay,az,alphax,alphay,alphaz\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 6; ++i) printf(",%.17g", out[s * 114 + 108 + i]);
    printf("\n");
  }
  hyq_frame8(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# jacobian.lh_foot: state,J0.0,J0.1,J0.2,J0.3,J0.4,J0.5,J0.6,J0.7,J0.8,J0.9,J0.10,J0.11,J0.12,J0.13,J0.14,J0.15,J0.16,J0.17,J1.0,J1.1,J1.2,J1.3,J1.4,J1.5,J1.6,J1.7,J1.8,J1.9,J1.10,J1.11,J1.12,J1.13,J1.14,J1.15,J1.16,J1.17,J2.0,J2.1,J2.2,J2.3,J2.4,J2.5,J2.6,J2.7,J2.8,J2.9,J2.10,J2.11,J2.12,J2.13,J2.14,J2.15,J2.16,J2.17,J3.0,J3.1,J3.2,J3.3,J3.4,J3.5,J3.6,J3.7,J3.8,J3.9,J3.10,J3.11,J3.12,J3.13,J3.14,J3.15,J3.16,J3.17,J4.0,J4.1,J4.2,J4.3,J4.4,J4.5,J4.6,J4.7,J4.8,J4.9,J4.10,J4.11,J4.12,J4.13,J4.14,J4.15,J4.16,J4.17,J5.0,J5.1,J5.2,J5.3,J5.4,J5.5,J5.6,J5.7,J5.8,J5.9,J5.10,J5.11,J5.12,J5.13,J5.14,J5.15,J5.16,J5.17\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 108; ++i) printf(",%.17g", out[s * 114 + 0 + i]);
    printf("\n");
  }
  printf("# frame_bias.lh_foot: state,ax,ay,az,alphax,alphay,alphaz\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 6; ++i) printf(",%.17g", out[s * 114 + 108 + i]);
    printf("\n");
  }
  hyq_frame12(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# jacobian.rf_foot: state,J0.0,J0.1,J0.2,J0.3,J0.4,J0.5,J0.6,J0.7,J0.8,J0.9,J0.10,J0.11,J0.12,J0.13,J0.14,J0.15,J0.16,J0.17,J1.0,J1.1,J1.2,J1.3,J1.4,J1.5,J1.6,J1.7,J1.8,J1.9,J1.10,J1.11,J1.12,J1.13,J1.14,J1.15,J1.16,J1.17,J2.0,J2.1,J2.2,J2.3,J2.4,J2.5,J2.6,J2.7,J2.8,J2.9,J2.10,J2.11,J2.12,J2.13,J2.14,J2.15,J2.16,J2.17,J3.0,J3.1,J3.2,J3.3,J3.4,J3.5,J3.6,J3.7,J3.8,J3.9,J3.10,J3.11,J3.12,J3.13,J3.14,J3.15,J3.16,J3.17,J4.0,J4.1,J4.2,J4.3,J4.4,J4.5,J4.6,J4.7,J4.8,J4.9,J4.10,J4.11,J4.12,J4.13,J4.14,J4.15,J4.16,J4.17,J5.0,J5.1,J5.2,J5.3,J5.4,J5.5,J5.6,J5.7,J5.8,J5.9,J5.10,J5.11,J5.12,J5.13,J5.14,J5.15,J5.16,J5.17\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 108; ++i) printf(",%.17g", out[s * 114 + 0 + i]);
    printf("\n");
  }
  printf("# frame_bias.rf_foot: state,ax,ay,az,alphax,alphay,alphaz\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 6; ++i) printf(",%.17g", out[s * 114 + 108 + i]);
    printf("\n");
  }
  hyq_frame16(NS, q, v, a, HYQ_P_DEFAULT, out);
  printf("# jacobian.rh_foot: state,J0.0,J0.1,J0.2,J0.3,J0.4,J0.5,J0.6,J0.7,J0.8,J0.9,J0.10,J0.11,J0.12,J0.13,J0.14,J0.15,J0.16,J0.17,J1.0,J1.1,J1.2,J1.3,J1.4,J1.5,J1.6,J1.7,J1.8,J1.9,J1.10,J1.11,J1.12,J1.13,J1.14,J1.15,J1.16,J1.17,J2.0,J2.1,J2.2,J2.3,J2.4,J2.5,J2.6,J2.7,J2.8,J2.9,J2.10,J2.11,J2.12,J2.13,J2.14,J2.15,J2.16,J2.17,J3.0,J3.1,J3.2,J3.3,J3.4,J3.5,J3.6,J3.7,J3.8,J3.9,J3.10,J3.11,J3.12,J3.13,J3.14,J3.15,J3.16,J3.17,J4.0,J4.1,J4.2,J4.3,J4.4,J4.5,J4.6,J4.7,J4.8,J4.9,J4.10,J4.11,J4.12,J4.13,J4.14,J4.15,J4.16,J4.17,J5.0,J5.1,J5.2,J5.3,J5.4,J5.5,J5.6,J5.7,J5.8,J5.9,J5.10,J5.11,J5.12,J5.13,J5.14,J5.15,J5.16,J5.17\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 108; ++i) printf(",%.17g", out[s * 114 + 0 + i]);
    printf("\n");
  }
  printf("# frame_bias.rh_foot: state,ax,ay,az,alphax,alphay,alphaz\n");
  for (int s = 0; s < NS; ++s) {
    printf("%d", s);
    for (int i = 0; i < 6; ++i) printf(",%.17g", out[s * 114 + 108 + i]);
    printf("\n");
  }
  return 0;
}
