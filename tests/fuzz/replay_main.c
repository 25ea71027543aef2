/* SPDX-License-Identifier: MIT */
/* Corpus replay: run LLVMFuzzerTestOneInput over every regular file of the
 * directories (or files) named on the command line, in name order.  Fails
 * when there is nothing to replay, since an empty corpus proves nothing.
 * Linked with each fuzz target in normal builds; a test program only. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

#define MAX_INPUT_BYTES ((size_t)16 << 20)

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        (void)fprintf(stderr, "replay: cannot open \"%s\"\n", path);
        return -1;
    }
    unsigned char *data = malloc(MAX_INPUT_BYTES);
    size_t n = data != NULL ? fread(data, 1, MAX_INPUT_BYTES, f) : 0;
    int bad = data == NULL || ferror(f) || (n == MAX_INPUT_BYTES && !feof(f));
    (void)fclose(f);
    if (bad) {
        (void)fprintf(stderr, "replay: cannot read \"%s\"\n", path);
        free(data);
        return -1;
    }
    (void)LLVMFuzzerTestOneInput(data, n);
    free(data);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replays every regular file of dir; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, by_name);
    if (n < 0) {
        (void)fprintf(stderr, "replay: cannot list \"%s\"\n", dir);
        return -1;
    }
    long done = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        int len = snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
        if (len > 0 && (size_t)len < sizeof(path) && stat(path, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            if (replay_file(path) < 0)
                done = -1;
            else if (done >= 0)
                done++;
        }
        free(list[i]);
    }
    free(list);
    return done;
}

int main(int argc, char **argv)
{
    long total = 0;
    if (argc < 2) {
        (void)fprintf(stderr, "usage: %s CORPUS_DIR|FILE...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        struct stat st;
        long n = -1;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            n = replay_dir(argv[i]);
        else if (replay_file(argv[i]) == 0)
            n = 1;
        if (n < 0)
            return 1;
        total += n;
    }
    if (total == 0) {
        (void)fprintf(stderr, "replay: no input to replay\n");
        return 1;
    }
    (void)printf("replayed %ld inputs\n", total);
    return 0;
}
