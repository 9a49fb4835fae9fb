/*
 * hapbench kernel ABI, version 1.
 *
 * One C ABI for every target (cpu, cuda, ascend). A submission is one source file per
 * operator; it defines
 *
 *     HB_EXPORT int hapbench_kernel(const hb_call *call);
 *
 * and, when it needs scratch memory, optionally
 *
 *     HB_EXPORT uint64_t hapbench_workspace_bytes(const hb_call *call);
 *
 * which is called once per case with the same call description (tensor data pointers are
 * null there) before any call of hapbench_kernel for that case.
 *
 * The harness allocates every output and the workspace. hapbench_kernel returns 0 on
 * success, or a non-zero error code after writing a message into call->error_message.
 * Tensors are described by a data pointer, dtype, rank, shape and strides (in elements);
 * inputs the harness generates are contiguous and row-major, but kernels should read the
 * strides rather than assume them. A tensor-list argument (Tensor[] in a schema) is one
 * hb_arg with count tensors. An optional argument that is absent has present == 0.
 * Outputs whose length depends on the data get a capacity in their shape; the kernel stores
 * how many leading elements along dimension 0 it wrote in *written_length.
 *
 * On accelerators, data pointers are device pointers and the kernel launches on
 * call->stream; the harness synchronizes that stream (and the device) after the call.
 */
#ifndef HAPBENCH_KERNEL_H
#define HAPBENCH_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_ABI_VERSION 1
#define HB_MAX_RANK 8

#if defined(__GNUC__)
#define HB_EXPORT __attribute__((visibility("default")))
#else
#define HB_EXPORT
#endif

typedef enum hb_dtype {
    HB_FLOAT16 = 1,
    HB_BFLOAT16 = 2,
    HB_FLOAT32 = 3,
    HB_FLOAT64 = 4,
    HB_INT8 = 5,
    HB_UINT8 = 6,
    HB_INT16 = 7,
    HB_INT32 = 8,
    HB_INT64 = 9,
    HB_BOOL = 10
} hb_dtype;

typedef struct hb_tensor {
    void *data;
    hb_dtype dtype;
    int32_t rank;
    int64_t shape[HB_MAX_RANK];
    int64_t strides[HB_MAX_RANK]; /* in elements, not bytes */
} hb_tensor;

typedef struct hb_arg {
    const char *name;
    int32_t present;        /* 0 for an optional argument that is absent */
    int32_t is_list;        /* 1 for a Tensor[] argument */
    int32_t count;          /* tensors in the list; 1 for a plain tensor */
    hb_tensor *tensors;
    int64_t *written_length; /* outputs of data-dependent length only, else null */
} hb_arg;

typedef enum hb_attr_type {
    HB_ATTR_NONE = 0, /* an optional attribute given as None */
    HB_ATTR_FLOAT = 1,
    HB_ATTR_INT = 2,
    HB_ATTR_BOOL = 3,
    HB_ATTR_STRING = 4,
    HB_ATTR_INT_LIST = 5,
    HB_ATTR_FLOAT_LIST = 6
} hb_attr_type;

typedef struct hb_attr {
    const char *name;
    hb_attr_type type;
    double f;           /* HB_ATTR_FLOAT */
    int64_t i;          /* HB_ATTR_INT, HB_ATTR_BOOL (0 or 1) */
    const char *s;      /* HB_ATTR_STRING */
    int32_t count;      /* list attributes */
    const int64_t *ints;
    const double *floats;
} hb_attr;

typedef struct hb_call {
    int32_t abi_version;
    const char *op_name;
    int32_t num_inputs;
    const hb_arg *inputs;
    int32_t num_outputs;
    hb_arg *outputs;
    int32_t num_attrs;
    const hb_attr *attrs;
    void *workspace;
    uint64_t workspace_bytes;
    int32_t num_threads;      /* cpu: threads the kernel may use (OpenMP is set to it) */
    void *stream;             /* cuda: cudaStream_t; ascend: aclrtStream; cpu: null */
    int32_t device;
    char *error_message;      /* write a NUL-terminated message here on failure */
    uint64_t error_message_capacity;
} hb_call;

/* Entry points a submission defines. */
typedef int (*hb_kernel_fn)(const hb_call *call);
typedef uint64_t (*hb_workspace_fn)(const hb_call *call);

/* Small helpers, usable from C and C++. */

static inline const hb_arg *hb_input(const hb_call *call, const char *name) {
    for (int32_t i = 0; i < call->num_inputs; ++i)
        if (strcmp(call->inputs[i].name, name) == 0) return &call->inputs[i];
    return NULL;
}

static inline hb_arg *hb_output(const hb_call *call, const char *name) {
    for (int32_t i = 0; i < call->num_outputs; ++i)
        if (strcmp(call->outputs[i].name, name) == 0) return &call->outputs[i];
    return NULL;
}

static inline const hb_attr *hb_attr_find(const hb_call *call, const char *name) {
    for (int32_t i = 0; i < call->num_attrs; ++i)
        if (strcmp(call->attrs[i].name, name) == 0) return &call->attrs[i];
    return NULL;
}

static inline double hb_attr_float(const hb_call *call, const char *name, double fallback) {
    const hb_attr *a = hb_attr_find(call, name);
    if (!a) return fallback;
    if (a->type == HB_ATTR_FLOAT) return a->f;
    if (a->type == HB_ATTR_INT || a->type == HB_ATTR_BOOL) return (double)a->i;
    return fallback;
}

static inline int64_t hb_attr_int(const hb_call *call, const char *name, int64_t fallback) {
    const hb_attr *a = hb_attr_find(call, name);
    if (!a) return fallback;
    if (a->type == HB_ATTR_INT || a->type == HB_ATTR_BOOL) return a->i;
    if (a->type == HB_ATTR_FLOAT) return (int64_t)a->f;
    return fallback;
}

static inline const char *hb_attr_string(const hb_call *call, const char *name,
                                         const char *fallback) {
    const hb_attr *a = hb_attr_find(call, name);
    return (a && a->type == HB_ATTR_STRING) ? a->s : fallback;
}

static inline int64_t hb_numel(const hb_tensor *t) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; ++d) n *= t->shape[d];
    return n;
}

static inline int hb_is_contiguous(const hb_tensor *t) {
    int64_t expected = 1;
    for (int32_t d = t->rank - 1; d >= 0; --d) {
        if (t->shape[d] != 1 && t->strides[d] != expected) return 0;
        expected *= t->shape[d];
    }
    return 1;
}

/* Writes a message for the harness and returns code, for `return hb_fail(call, 3, "...")`. */
static inline int hb_fail(const hb_call *call, int code, const char *message) {
    if (call->error_message && call->error_message_capacity > 0) {
        size_t n = strlen(message);
        if (n >= call->error_message_capacity) n = (size_t)call->error_message_capacity - 1;
        memcpy(call->error_message, message, n);
        call->error_message[n] = '\0';
    }
    return code;
}

#ifdef __cplusplus
}
#endif

#endif /* HAPBENCH_KERNEL_H */
