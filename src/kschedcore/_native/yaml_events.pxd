# libyaml's event parser (yaml.h), the part the loader reads (the anonymous structs of
# yaml_event_t's union are named here only for Cython: code reads their fields, never the structs).
cdef extern from "yaml.h" nogil:
    ctypedef unsigned char yaml_char_t
    ctypedef enum yaml_event_type_t:
        YAML_NO_EVENT
        YAML_STREAM_START_EVENT
        YAML_STREAM_END_EVENT
        YAML_DOCUMENT_START_EVENT
        YAML_DOCUMENT_END_EVENT
        YAML_ALIAS_EVENT
        YAML_SCALAR_EVENT
        YAML_SEQUENCE_START_EVENT
        YAML_SEQUENCE_END_EVENT
        YAML_MAPPING_START_EVENT
        YAML_MAPPING_END_EVENT
    ctypedef enum yaml_scalar_style_t:
        YAML_ANY_SCALAR_STYLE
        YAML_PLAIN_SCALAR_STYLE
    ctypedef struct _scalar_data:
        yaml_char_t* anchor
        yaml_char_t* tag
        yaml_char_t* value
        size_t length
        int plain_implicit
        int quoted_implicit
        yaml_scalar_style_t style
    ctypedef struct _collection_start:
        yaml_char_t* anchor
        yaml_char_t* tag
    ctypedef union _event_data:
        _scalar_data scalar
        _collection_start sequence_start
        _collection_start mapping_start
    ctypedef struct yaml_event_t:
        yaml_event_type_t type
        _event_data data
    ctypedef struct yaml_parser_t:
        pass
    int yaml_parser_initialize(yaml_parser_t* parser)
    void yaml_parser_delete(yaml_parser_t* parser)
    void yaml_parser_set_input_string(yaml_parser_t* parser, const unsigned char* input, size_t size)
    int yaml_parser_parse(yaml_parser_t* parser, yaml_event_t* event)
    void yaml_event_delete(yaml_event_t* event)
