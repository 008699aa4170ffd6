/* Times whisper.cpp's own work on one file, with nothing of yazses around it: load a ggml
 * model, transcribe the file RUNS times (greedy, 2 threads), print whisper's timings. Built
 * once against the whisper.cpp yazses links (whisper-rs-sys) and once against another
 * version, it tells the version's share of a speed gap from the wrapper's.
 * Usage: encode MODEL.bin AUDIO.wav RUNS  (AUDIO: 16 kHz mono 16-bit WAV, 44-byte header) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "whisper.h"

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MODEL.bin AUDIO.wav RUNS\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[2], "rb");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 44, SEEK_SET);
    long n = (bytes - 44) / 2;
    int16_t *pcm = malloc(n * sizeof *pcm);
    float *audio = malloc(n * sizeof *audio);
    if (fread(pcm, sizeof *pcm, n, f) != (size_t) n) {
        fprintf(stderr, "%s: short read\n", argv[2]);
        return 1;
    }
    fclose(f);
    for (long i = 0; i < n; i++) audio[i] = pcm[i] / 32768.0f;

    /* The plain loader: its signature has not changed across the versions compared. */
    struct whisper_context *ctx = whisper_init_from_file(argv[1]);
    if (!ctx) return 1;
    for (int r = 0; r < atoi(argv[3]); r++) {
        struct whisper_full_params *p = whisper_full_default_params_by_ref(WHISPER_SAMPLING_GREEDY);
        p->n_threads = 2;
        p->print_progress = p->print_realtime = p->print_timestamps = p->print_special = 0;
        double t = seconds();
        whisper_full(ctx, *p, audio, n);
        fprintf(stderr, "run %d: %.3f s: %s\n", r, seconds() - t,
                whisper_full_n_segments(ctx) ? whisper_full_get_segment_text(ctx, 0) : "");
    }
    whisper_print_timings(ctx);
    whisper_free(ctx);
    return 0;
}
