// A stand-in libnvidia-ml.so.1 for unit tests of the dlopen loader: NVML's C entry points with
// fixed answers for one GPU whose link trained down to Gen4 x8, with a row remap pending and two
// uncorrected ECC errors. Bus id "0000:ff:00.0" is unknown (NVML_ERROR_NOT_FOUND = 6).
#include <cstring>

extern "C" {

int nvmlInit_v2() {
    return 0;
}
int nvmlShutdown() {
    return 0;
}
const char* nvmlErrorString(int rc) {
    return rc == 6 ? "Not Found" : "Unknown Error";
}
int nvmlSystemGetDriverVersion(char* out, unsigned n) {
    std::strncpy(out, "580.95.05", n);
    return 0;
}
int nvmlDeviceGetHandleByPciBusId_v2(const char* bus, void** device) {
    if (std::strcmp(bus, "0000:ff:00.0") == 0) {
        return 6;
    }
    static int token;
    *device = &token;
    return 0;
}
int nvmlDeviceGetCurrPcieLinkGeneration(void*, unsigned* v) {
    *v = 4;
    return 0;
}
int nvmlDeviceGetCurrPcieLinkWidth(void*, unsigned* v) {
    *v = 8;
    return 0;
}
int nvmlDeviceGetMaxPcieLinkGeneration(void*, unsigned* v) {
    *v = 5;
    return 0;
}
int nvmlDeviceGetMaxPcieLinkWidth(void*, unsigned* v) {
    *v = 16;
    return 0;
}
int nvmlDeviceGetRemappedRows(void*, unsigned* corr, unsigned* unc, unsigned* pending,
                              unsigned* failed) {
    *corr = 1;
    *unc = 2;
    *pending = 1;
    *failed = 0;
    return 0;
}
int nvmlDeviceGetTotalEccErrors(void*, int error_type, int, unsigned long long* count) {
    *count = error_type == 1 ? 2 : 17;
    return 0;
}
int nvmlDeviceGetClockInfo(void*, int, unsigned* mhz) {
    *mhz = 1755;
    return 0;
}
int nvmlDeviceGetMaxClockInfo(void*, int, unsigned* mhz) {
    *mhz = 1980;
    return 0;
}

}  // extern "C"
