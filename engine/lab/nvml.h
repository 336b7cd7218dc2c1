/* nvml.h — board power from NVML, loaded at run time like the driver (libnvidia-ml.so.1 exists
 * only where there is an NVIDIA driver). Read-only: the engine never changes a GPU's settings.
 * Power over a timed region is the energy counter's difference over the region's wall time
 * (Volta and newer), for regions of half a second or more; where that counter is missing, the
 * driver's own power reading. */
#ifndef ENGINE_NVML_H
#define ENGINE_NVML_H

#include <stdbool.h>

typedef struct {
    void *lib;    /* dlopen handle, NULL when NVML is absent */
    void *dev;    /* nvmlDevice_t of the GPU the worker times on */
    bool energy;  /* the total-energy counter works */
} nvml_t;

/* Find the GPU with this PCI bus id ("0000:19:00.0", from the driver API). Returns 0, or -1 when
 * NVML or the device is not there (n is then inert: every read says "unknown"). */
int nvml_open(nvml_t *n, const char *pci_bus_id);
void nvml_close(nvml_t *n);

/* A point on the energy counter: millijoules since the driver loaded, with the wall time. */
typedef struct {
    unsigned long long mj;
    double ms;
    bool ok;
} nvml_mark;
nvml_mark nvml_now(nvml_t *n);
/* The shortest timed region whose power is reported (ms). */
#define NVML_MIN_WINDOW_MS 500.0

/* Average power in watts between two marks; -1 when unknown or the region was shorter than
 * NVML_MIN_WINDOW_MS (time more --runs or --iters to see it). */
double nvml_watts(nvml_t *n, nvml_mark a, nvml_mark b);

#endif
