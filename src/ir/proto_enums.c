/* proto_enums.c: XLA's enum numbers and words (proto_enums.h). */
#include "proto_enums.h"

#include <string.h>

#define ENUM(var, ...)                                                          \
    static const char *const var##_names[] = { __VA_ARGS__ };                   \
    const ProtoEnum var = { var##_names, (int)(sizeof var##_names / sizeof var##_names[0]) };

ENUM(proto_precision, "default", "high", "highest")
ENUM(proto_dot_algorithm, "unset", "dot_any_f8_any_f8_f32", "dot_any_f8_any_f8_f32_fast_accum", "dot_f16_f16_f16",
     "dot_f16_f16_f32", "dot_bf16_bf16_bf16", "dot_bf16_bf16_f32", "dot_bf16_bf16_f32_x3", "dot_bf16_bf16_f32_x6",
     "dot_tf32_tf32_f32", "dot_tf32_tf32_f32_x3", "dot_f32_f32_f32", "dot_f64_f64_f64", "dot_bf16_bf16_f32_x9")
ENUM(proto_rng_algorithm, "rng_default", "rng_three_fry", "rng_philox")
ENUM(proto_distribution, "rng_invalid", "rng_uniform", "rng_normal")
ENUM(proto_fft_type, "FFT", "IFFT", "RFFT", "IRFFT")
ENUM(proto_schedule, "SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST")
ENUM(proto_api_version, "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
     "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI")
ENUM(proto_transpose, "TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")

const char *proto_enum_name(const ProtoEnum *e, int64_t v)
{
    return v >= 0 && v < e->n ? e->names[v] : NULL;
}

int proto_enum_value(const ProtoEnum *e, const char *word)
{
    for (int i = 0; i < e->n; i++)
        if (strcmp(e->names[i], word) == 0)
            return i;
    return -1;
}

static const struct { int32_t proto; IrElemType ir; } types[] = {
    { 1, IR_TYPE_PRED }, { 30, IR_TYPE_S1 }, { 26, IR_TYPE_S2 }, { 21, IR_TYPE_S4 }, { 2, IR_TYPE_S8 },
    { 3, IR_TYPE_S16 }, { 4, IR_TYPE_S32 }, { 5, IR_TYPE_S64 }, { 31, IR_TYPE_U1 }, { 27, IR_TYPE_U2 },
    { 22, IR_TYPE_U4 }, { 6, IR_TYPE_U8 }, { 7, IR_TYPE_U16 }, { 8, IR_TYPE_U32 }, { 9, IR_TYPE_U64 },
    { 10, IR_TYPE_F16 }, { 11, IR_TYPE_F32 }, { 16, IR_TYPE_BF16 }, { 12, IR_TYPE_F64 }, { 19, IR_TYPE_F8E5M2 },
    { 28, IR_TYPE_F8E4M3 }, { 20, IR_TYPE_F8E4M3FN }, { 23, IR_TYPE_F8E4M3B11FNUZ }, { 29, IR_TYPE_F8E3M4 },
    { 24, IR_TYPE_F8E5M2FNUZ }, { 25, IR_TYPE_F8E4M3FNUZ }, { 33, IR_TYPE_F8E8M0FNU }, { 32, IR_TYPE_F4E2M1FN },
    { 15, IR_TYPE_C64 }, { 18, IR_TYPE_C128 }, { 13, IR_TYPE_TUPLE }, { 14, IR_TYPE_OPAQUE }, { 17, IR_TYPE_TOKEN },
};

IrElemType proto_type_to_ir(int32_t t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].proto == t)
            return types[i].ir;
    return IR_TYPE_INVALID;
}

int32_t proto_type_from_ir(IrElemType t)
{
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (types[i].ir == t)
            return types[i].proto;
    return 0;
}
