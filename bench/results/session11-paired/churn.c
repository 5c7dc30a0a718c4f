#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>
static long faults(void){ struct rusage u; getrusage(RUSAGE_THREAD,&u); return u.ru_minflt; }
static void *run(void *a){
  long f0=0;
  for(int i=0;i<20;i++){
    if(i==1) f0=faults();
    char *p[3];
    for(int k=0;k<3;k++){ p[k]=malloc(1<<20); memset(p[k],1,1<<20); }
    for(int k=0;k<3;k++) free(p[k]);
  }
  printf("faults over 19 rounds: %ld\n", faults()-f0);
  return 0;
}
int main(int c,char**v){
  if(c>1){ mallopt(M_MMAP_THRESHOLD,32<<20); mallopt(M_TRIM_THRESHOLD,256<<20); mallopt(M_TOP_PAD,16<<20); }
  pthread_t t; pthread_create(&t,0,run,0); pthread_join(t,0);
  run(0);
}
