/**
 * The OTLP trace messages for protobufjs (SPEC 7.4). No maintained npm package exposes a public
 * OTLP request decoder any more (`@opentelemetry/otlp-transformer` ≥ 0.300 only encodes, has its
 * own writer and ships no .proto files), so the wire schema is given here in .proto syntax — the
 * trace subset of opentelemetry-proto v1 (common, resource, trace, collector/trace), whose field
 * numbers are OTLP's stable wire contract — and decoded by protobufjs through its public
 * `parse`/`Type.decode` API. The integration tests check it against `exporter-trace-otlp-proto`.
 */
import protobuf from "protobufjs";

const OTLP_TRACE_PROTO = `
syntax = "proto3";
package opentelemetry.proto;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}
message ResourceSpans {
  Resource resource = 1;
  repeated ScopeSpans scope_spans = 2;
  string schema_url = 3;
}
message ScopeSpans {
  InstrumentationScope scope = 1;
  repeated Span spans = 2;
  string schema_url = 3;
}
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  string trace_state = 3;
  bytes parent_span_id = 4;
  fixed32 flags = 16;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  uint32 dropped_attributes_count = 10;
  repeated Event events = 11;
  uint32 dropped_events_count = 12;
  repeated Link links = 13;
  uint32 dropped_links_count = 14;
  Status status = 15;

  message Event {
    fixed64 time_unix_nano = 1;
    string name = 2;
    repeated KeyValue attributes = 3;
    uint32 dropped_attributes_count = 4;
  }
  message Link {
    bytes trace_id = 1;
    bytes span_id = 2;
    string trace_state = 3;
    repeated KeyValue attributes = 4;
    uint32 dropped_attributes_count = 5;
    fixed32 flags = 6;
  }
}
message Status {
  string message = 2;
  int32 code = 3;
}
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse { ExportTracePartialSuccess partial_success = 1; }
message ExportTracePartialSuccess {
  int64 rejected_spans = 1;
  string error_message = 2;
}
`;

const GOOGLE_RPC_STATUS_PROTO = `
syntax = "proto3";
package google.rpc;
message Status { int32 code = 1; string message = 2; }
`;

const otlp = protobuf.parse(OTLP_TRACE_PROTO).root;
const rpc = protobuf.parse(GOOGLE_RPC_STATUS_PROTO).root;

export const ExportTraceServiceRequest = otlp.lookupType("opentelemetry.proto.ExportTraceServiceRequest");
export const ExportTraceServiceResponse = otlp.lookupType("opentelemetry.proto.ExportTraceServiceResponse");
/** `google.rpc.Status`, the body of OTLP/HTTP protobuf error answers. */
export const RpcStatus = rpc.lookupType("google.rpc.Status");
