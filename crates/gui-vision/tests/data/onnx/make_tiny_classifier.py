"""Writes the tiny ONNX widget classifiers that tests/onnx_classifier.rs runs.

    python3 -m pip install onnx && python3 make_tiny_classifier.py

The network is GlobalAveragePool -> Flatten -> Gemm(3 -> 14) [-> Softmax]: the class
depends only on the mean colour of the crop, after ImageNet normalisation, so the test can
predict it. Output columns follow gui_core::WidgetKind::ALL:
  red crop   -> 0  Button    (weight 4 on the red channel)
  green crop -> 3  CheckBox  (weight 4 on the green channel)
  blue crop  -> 13 Icon      (weight 4 on the blue channel)
  dark crop  -> 1  TextView  (bias 1; every colour channel is negative)
"""

import os

import onnx
from onnx import TensorProto, helper

CLASSES = 14
HERE = os.path.dirname(os.path.abspath(__file__))


def weights():
    w = [[0.0] * CLASSES for _ in range(3)]
    w[0][0] = 4.0
    w[1][3] = 4.0
    w[2][13] = 4.0
    bias = [0.0] * CLASSES
    bias[1] = 1.0
    return w, bias


def build(with_softmax: bool) -> onnx.ModelProto:
    w, bias = weights()
    nodes = [
        helper.make_node("GlobalAveragePool", ["image"], ["pooled"]),
        helper.make_node("Flatten", ["pooled"], ["colour"], axis=1),
        helper.make_node("Gemm", ["colour", "W", "b"], ["logits"]),
    ]
    output = "logits"
    if with_softmax:
        nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=1))
        output = "probs"
    graph = helper.make_graph(
        nodes,
        "tiny_widget_classifier",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 3, "H", "W"])],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, ["N", CLASSES])],
        initializer=[
            helper.make_tensor("W", TensorProto.FLOAT, [3, CLASSES], sum(w, [])),
            helper.make_tensor("b", TensorProto.FLOAT, [CLASSES], bias),
        ],
    )
    model = helper.make_model(
        graph,
        producer_name="gui-vision tests",
        opset_imports=[helper.make_opsetid("", 13)],
    )
    model.ir_version = 7
    onnx.checker.check_model(model)
    return model


if __name__ == "__main__":
    for name, softmax in [("tiny_classifier.onnx", True), ("tiny_classifier_logits.onnx", False)]:
        path = os.path.join(HERE, name)
        onnx.save(build(softmax), path)
        print(f"wrote {path} ({os.path.getsize(path)} bytes)")
