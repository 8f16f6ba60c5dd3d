/* proto_enums.h: how XLA's enums appear in a proto (their numbers) and in
 * HLO text (their words), shared by the reader (proto.c) and the writer
 * (proto_write.c).  Private to src/ir/. */
#ifndef IR_PROTO_ENUMS_H
#define IR_PROTO_ENUMS_H

#include "ir.h"

/* An enum whose value v is written as names[v] in text. */
typedef struct ProtoEnum {
    const char *const *names;
    int n;
} ProtoEnum;

extern const ProtoEnum proto_precision;        /* PrecisionConfig.Precision: operand_precision={...} */
extern const ProtoEnum proto_dot_algorithm;    /* PrecisionConfig.Algorithm: algorithm= of dot, convolution */
extern const ProtoEnum proto_rng_algorithm;    /* RandomAlgorithm: algorithm= of rng-bit-generator */
extern const ProtoEnum proto_distribution;     /* RandomDistribution: distribution= of rng */
extern const ProtoEnum proto_fft_type;         /* FftType: fft_type= */
extern const ProtoEnum proto_schedule;         /* CustomCallSchedule: schedule= */
extern const ProtoEnum proto_api_version;      /* CustomCallApiVersion: api_version= */
extern const ProtoEnum proto_transpose;        /* TriangularSolveOptions.Transpose: transpose_a= */

/* The word of value v, NULL when v is not one XLA defines. */
const char *proto_enum_name(const ProtoEnum *e, int64_t v);
/* The value of word, -1 when it names none. */
int proto_enum_value(const ProtoEnum *e, const char *word);

/* PrimitiveType numbers (xla_data.proto) and the IR's element types, both
 * ways: IR_TYPE_TUPLE, IR_TYPE_OPAQUE and IR_TYPE_TOKEN included;
 * IR_TYPE_INVALID / 0 for what the other side lacks. */
IrElemType proto_type_to_ir(int32_t t);
int32_t proto_type_from_ir(IrElemType t);

#endif
