/* A stand-in for Windows' bcryptprimitives.dll, for running tether-host.exe under Wine 8
 * (Debian 12's), which lacks it: Rust's standard library asks its ProcessPrng for random
 * bytes on every Windows since 10. Answered here from advapi32's RtlGenRandom
 * (SystemFunction036), which Wine has. scripts/cross-check.sh builds it beside the .exe; a
 * real Windows has its own and never loads this. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
