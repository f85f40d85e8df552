# SPDX-License-Identifier: Apache-2.0
# The official TF Serving Python client (tensorflow-serving-api) against kiln-serve over gRPC:
# GetModelStatus, GetModelMetadata and Predict (float_val and tensor_content requests, a broadcast
# past the element budget, a message past the size limit), with the expected outputs given on the
# command line. Prints one JSON line with what it saw; exits 1 on a mismatch.
import argparse
import json
import sys

import grpc
import numpy as np
import tensorflow as tf
from tensorflow_serving.apis import get_model_metadata_pb2, get_model_status_pb2, model_service_pb2_grpc
from tensorflow_serving.apis import predict_pb2, prediction_service_pb2_grpc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--inputs", required=True, help="JSON: {name: nested list}")
    ap.add_argument("--expected", required=True, help="JSON: {output: nested list}")
    args = ap.parse_args()
    inputs = {k: np.asarray(v, dtype=np.float32) for k, v in json.loads(args.inputs).items()}
    expected = {k: np.asarray(v, dtype=np.float32) for k, v in json.loads(args.expected).items()}

    channel = grpc.insecure_channel(args.target)
    grpc.channel_ready_future(channel).result(timeout=30)
    report = {}

    status_stub = model_service_pb2_grpc.ModelServiceStub(channel)
    sreq = get_model_status_pb2.GetModelStatusRequest()
    sreq.model_spec.name = args.model
    sres = status_stub.GetModelStatus(sreq, timeout=30)
    report["status"] = [(s.version, get_model_status_pb2.ModelVersionStatus.State.Name(s.state))
                        for s in sres.model_version_status]

    stub = prediction_service_pb2_grpc.PredictionServiceStub(channel)
    mreq = get_model_metadata_pb2.GetModelMetadataRequest()
    mreq.model_spec.name = args.model
    mreq.metadata_field.append("signature_def")
    mres = stub.GetModelMetadata(mreq, timeout=30)
    sigmap = get_model_metadata_pb2.SignatureDefMap()
    ok = mres.metadata["signature_def"].Unpack(sigmap)
    sig = sigmap.signature_def["serving_default"]
    report["metadata"] = {
        "unpacked": ok,
        "version": mres.model_spec.version.value,
        "inputs": {k: [d.size for d in v.tensor_shape.dim] for k, v in sig.inputs.items()},
        "outputs": {k: [d.size for d in v.tensor_shape.dim] for k, v in sig.outputs.items()},
        "dtypes": sorted({tf.dtypes.as_dtype(v.dtype).name for v in list(sig.inputs.values()) + list(sig.outputs.values())}),
        "method_name": sig.method_name,
    }

    max_diff = 0.0
    for use_content in (False, True):
        preq = predict_pb2.PredictRequest()
        preq.model_spec.name = args.model
        preq.model_spec.signature_name = "serving_default"
        for name, value in inputs.items():
            if use_content:
                preq.inputs[name].CopyFrom(tf.make_tensor_proto(value))  # tensor_content
            else:
                proto = preq.inputs[name]
                proto.dtype = tf.float32.as_datatype_enum
                for d in value.shape:
                    proto.tensor_shape.dim.add().size = d
                proto.float_val.extend(value.flatten().tolist())
        pres = stub.Predict(preq, timeout=30)
        for name, want in expected.items():
            got = tf.make_ndarray(pres.outputs[name])
            if got.shape != want.shape:
                print(json.dumps({"error": f"output {name} has shape {got.shape}, expected {want.shape}"}))
                return 1
            max_diff = max(max_diff, float(np.max(np.abs(got - want))))
        report["predict_version"] = pres.model_spec.version.value

    # A wrong input name is INVALID_ARGUMENT; an unknown model NOT_FOUND.
    bad = predict_pb2.PredictRequest()
    bad.model_spec.name = args.model
    bad.inputs["no_such_input"].CopyFrom(tf.make_tensor_proto(np.zeros((1, 1), np.float32)))
    try:
        stub.Predict(bad, timeout=30)
        report["bad_input"] = "OK"
    except grpc.RpcError as e:
        report["bad_input"] = e.code().name
    missing = predict_pb2.PredictRequest()
    missing.model_spec.name = "no_such_model"
    try:
        stub.Predict(missing, timeout=30)
        report["unknown_model"] = "OK"
    except grpc.RpcError as e:
        report["unknown_model"] = e.code().name

    # One value broadcast over 65536 rows is more input values than the server's budget
    # (--max_request_elements): refused before anything is allocated.
    wide = predict_pb2.PredictRequest()
    wide.model_spec.name = args.model
    for name, value in inputs.items():
        proto = wide.inputs[name]
        proto.dtype = tf.float32.as_datatype_enum
        proto.tensor_shape.dim.add().size = 65536
        proto.tensor_shape.dim.add().size = value.shape[1]
        proto.float_val.append(0.5)
    try:
        stub.Predict(wide, timeout=30)
        report["broadcast"] = ["OK", ""]
    except grpc.RpcError as e:
        report["broadcast"] = [e.code().name, e.details()]
    # A message over --grpc_max_receive_message_bytes is refused by gRPC itself.
    huge = predict_pb2.PredictRequest()
    huge.model_spec.name = args.model
    for name, value in inputs.items():
        huge.inputs[name].CopyFrom(tf.make_tensor_proto(np.zeros((20000, value.shape[1]), np.float32)))
    try:
        stub.Predict(huge, timeout=30)
        report["huge_message"] = "OK"
    except grpc.RpcError as e:
        report["huge_message"] = e.code().name

    report["max_abs_diff"] = max_diff
    print(json.dumps(report))
    return 0 if max_diff < 1e-5 else 1


if __name__ == "__main__":
    sys.exit(main())
