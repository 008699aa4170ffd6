/* For CI under Wine only, never shipped: Wine 8 (Debian 12) has no bcryptprimitives.dll,
 * where Rust's standard library takes its random numbers from (ProcessPrng, Windows 10 and
 * later). This stands in for it with the older RtlGenRandom, which Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
