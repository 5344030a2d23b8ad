/* cuda-check: the CUDA parity suite and the device benchmark in one plain
 * program (libc and the static CUDA runtime), so that a bare GPU machine
 * needs to be carried only one copy of the kernels. */
#ifndef TC_CUDA_CHECK_H
#define TC_CUDA_CHECK_H
int parity_main(int argc, char **argv);
int bench_main(int argc, char **argv);
#endif
