"""The TFLite builtin operators TFLM's kernels implement: the list
docs/operators.md (``aot operators``) measures this compiler against.

Read from the op registrations (``Register_<NAME>``) of the TFLM build the
test oracle uses (the pinned ``tflite-micro`` wheel, see
../shared/docs/ORACLE.md), keeping the names that are TFLite builtins; TFLM's
custom operators (CIRCULAR_BUFFER, DETECTION_POSTPROCESS, ETHOSU, the signal
library) are left out.
"""

TFLM_BUILTINS: tuple[str, ...] = (
    "ABS", "ADD", "ADD_N", "ARG_MAX", "ARG_MIN", "ASSIGN_VARIABLE", "AVERAGE_POOL_2D",
    "BATCH_MATMUL", "BATCH_TO_SPACE_ND", "BROADCAST_ARGS", "BROADCAST_TO", "CALL_ONCE", "CAST",
    "CEIL", "CONCATENATION", "CONV_2D", "COS", "CUMSUM", "DEPTHWISE_CONV_2D", "DEPTH_TO_SPACE",
    "DEQUANTIZE", "DIV", "DYNAMIC_UPDATE_SLICE", "ELU", "EMBEDDING_LOOKUP", "EQUAL", "EXP",
    "EXPAND_DIMS", "FILL", "FLOOR", "FLOOR_DIV", "FLOOR_MOD", "FULLY_CONNECTED", "GATHER",
    "GATHER_ND", "GREATER", "GREATER_EQUAL", "HARD_SWISH", "IF", "L2_NORMALIZATION",
    "L2_POOL_2D", "LEAKY_RELU", "LESS", "LESS_EQUAL", "LOG", "LOGICAL_AND", "LOGICAL_NOT",
    "LOGICAL_OR", "LOGISTIC", "LOG_SOFTMAX", "MAXIMUM", "MAX_POOL_2D", "MEAN", "MINIMUM",
    "MIRROR_PAD", "MUL", "NEG", "NOT_EQUAL", "PACK", "PAD", "PADV2", "PRELU", "QUANTIZE",
    "READ_VARIABLE", "REDUCE_ALL", "REDUCE_MAX", "REDUCE_MIN", "RELU", "RELU6", "RESHAPE",
    "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR", "REVERSE_V2", "ROUND", "RSQRT", "SELECT_V2",
    "SHAPE", "SIN", "SLICE", "SOFTMAX", "SPACE_TO_BATCH_ND", "SPACE_TO_DEPTH", "SPLIT",
    "SPLIT_V", "SQRT", "SQUARE", "SQUARED_DIFFERENCE", "SQUEEZE", "STRIDED_SLICE", "SUB", "SUM",
    "SVDF", "TANH", "TRANSPOSE", "TRANSPOSE_CONV", "UNIDIRECTIONAL_SEQUENCE_LSTM", "UNPACK",
    "VAR_HANDLE", "WHILE", "ZEROS_LIKE",
)
