/* What dictation did to the Windows desktop, for ./ci.sh windows under Wine (never shipped):
 *
 *     desktop_probe.exe text CLASS        the text of the edit box inside the first top-level
 *                                         window of CLASS (Wine's notepad: Notepad)
 *     desktop_probe.exe clipboard         the clipboard's text
 *     desktop_probe.exe set-clipboard T   puts T on the clipboard
 *
 * Text is printed as UTF-8. Exit status 2: no such window, or no text on the clipboard. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include <windows.h>

static int print_utf8(const wchar_t *text) {
    int bytes = WideCharToMultiByte(CP_UTF8, 0, text, -1, NULL, 0, NULL, NULL);
    char *utf8 = malloc((size_t)bytes);
    if (!utf8) return 1;
    WideCharToMultiByte(CP_UTF8, 0, text, -1, utf8, bytes, NULL, NULL);
    fputs(utf8, stdout);
    free(utf8);
    return 0;
}

static int window_text(const wchar_t *class_name) {
    HWND top = FindWindowW(class_name, NULL);
    HWND edit = top ? FindWindowExW(top, NULL, L"Edit", NULL) : NULL;
    if (!edit) return 2;
    LRESULT units = SendMessageW(edit, WM_GETTEXTLENGTH, 0, 0);
    wchar_t *text = calloc((size_t)units + 1, sizeof *text);
    if (!text) return 1;
    SendMessageW(edit, WM_GETTEXT, (WPARAM)units + 1, (LPARAM)text);
    return print_utf8(text);
}

static int clipboard(void) {
    if (!OpenClipboard(NULL)) return 1;
    HANDLE data = GetClipboardData(CF_UNICODETEXT);
    const wchar_t *text = data ? GlobalLock(data) : NULL;
    int status = text ? print_utf8(text) : 2;
    if (text) GlobalUnlock(data);
    CloseClipboard();
    return status;
}

static int set_clipboard(const wchar_t *text) {
    size_t size = (wcslen(text) + 1) * sizeof *text;
    HGLOBAL data = GlobalAlloc(GMEM_MOVEABLE, size);
    if (!data) return 1;
    memcpy(GlobalLock(data), text, size);
    GlobalUnlock(data);
    if (!OpenClipboard(NULL)) return 1;
    EmptyClipboard();
    int status = SetClipboardData(CF_UNICODETEXT, data) ? 0 : 1;
    CloseClipboard();
    return status;
}

int wmain(int argc, wchar_t **argv) {
    if (argc == 3 && !wcscmp(argv[1], L"text")) return window_text(argv[2]);
    if (argc == 2 && !wcscmp(argv[1], L"clipboard")) return clipboard();
    if (argc == 3 && !wcscmp(argv[1], L"set-clipboard")) return set_clipboard(argv[2]);
    fputs("usage: desktop_probe.exe text CLASS | clipboard | set-clipboard TEXT\n", stderr);
    return 1;
}
