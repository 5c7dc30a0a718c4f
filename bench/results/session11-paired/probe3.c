#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/time.h>
static double tcpu(void){ struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID,&t); return t.tv_sec*1e3+t.tv_nsec/1e6; }
static double wall(void){ struct timeval t; gettimeofday(&t,0); return t.tv_sec+t.tv_usec/1e6; }
static uint64_t run(uint64_t *tab, uint64_t mask, int steps, uint64_t x){
  for(int i=0;i<steps;i++){ x^=x<<13; x^=x>>7; x^=x<<17; tab[x&mask]+=x; }
  return x;
}
int main(int c, char **v){
  FILE *f=fopen(v[1],"w");
  uint64_t *small=calloc(1<<15,8), *big=calloc(1<<20,8); uint64_t x=88172645463325252ULL; volatile uint64_t sink=0;
  for(;;){
    double t=wall();
    double a=tcpu(); x=run(small,0,400000,x); double b=tcpu();            /* ALU only (one entry) */
    x=run(small,(1<<15)-1,400000,x); double c2=tcpu();                      /* 256 KiB */
    x=run(big,(1<<20)-1,100000,x); double d=tcpu();                         /* 8 MiB */
    sink+=x;
    fprintf(f,"%.3f\t%.3f\t%.3f\t%.3f\n",t,b-a,c2-b,d-c2); fflush(f);
    usleep(200000);
  }
}
