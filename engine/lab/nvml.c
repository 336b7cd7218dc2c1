/* nvml.c — see nvml.h. The few NVML entry points are declared here by hand (their ABI is stable
 * since NVML's _v2 names), so building needs no NVML header. */
#define _GNU_SOURCE
#include "nvml.h"

#include "util.h"

#include <dlfcn.h>
#include <string.h>

typedef int nvml_ret; /* nvmlReturn_t: 0 is NVML_SUCCESS */

static struct {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    nvml_ret (*by_pci)(const char *bus_id, void **dev);
    nvml_ret (*energy)(void *dev, unsigned long long *mj);
    nvml_ret (*power)(void *dev, unsigned int *mw);
} f;

int nvml_open(nvml_t *n, const char *pci_bus_id)
{
    memset(n, 0, sizeof *n);
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    void *s[5] = {dlsym(lib, "nvmlInit_v2"), dlsym(lib, "nvmlShutdown"), dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"),
                  dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption"), dlsym(lib, "nvmlDeviceGetPowerUsage")};
    if (!s[0] || !s[1] || !s[2] || !s[4]) {
        dlclose(lib);
        return -1;
    }
    memcpy(&f.init, &s[0], sizeof s[0]);
    memcpy(&f.shutdown, &s[1], sizeof s[1]);
    memcpy(&f.by_pci, &s[2], sizeof s[2]);
    memcpy(&f.energy, &s[3], sizeof s[3]);
    memcpy(&f.power, &s[4], sizeof s[4]);
    if (f.init() != 0) {
        dlclose(lib);
        return -1;
    }
    if (f.by_pci(pci_bus_id, &n->dev) != 0) {
        f.shutdown();
        dlclose(lib);
        return -1;
    }
    n->lib = lib;
    unsigned long long mj;
    n->energy = f.energy && f.energy(n->dev, &mj) == 0;
    return 0;
}

void nvml_close(nvml_t *n)
{
    if (n->lib) {
        f.shutdown();
        dlclose(n->lib);
    }
    memset(n, 0, sizeof *n);
}

nvml_mark nvml_now(nvml_t *n)
{
    nvml_mark m = {0, now_ms(), false};
    if (n->lib && n->energy)
        m.ok = f.energy(n->dev, &m.mj) == 0;
    return m;
}

double nvml_watts(nvml_t *n, nvml_mark a, nvml_mark b)
{
    /* The counter moves in steps (on the H100 a 50 ms window read anything from 128 to 784 W):
     * shorter windows say nothing. The instantaneous reading is itself a trailing average of
     * about a second, so it is used only where there is no counter, under the same rule. */
    if (!n->lib || b.ms - a.ms < NVML_MIN_WINDOW_MS)
        return -1;
    if (a.ok && b.ok && b.mj > a.mj)
        return (double)(b.mj - a.mj) / (b.ms - a.ms); /* mJ per ms is W */
    unsigned int mw = 0;
    return f.power(n->dev, &mw) == 0 ? mw / 1000.0 : -1;
}
