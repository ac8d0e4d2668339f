"""Recipes of ai.onnx.ml operators: small fixed models (coefficients, trees, support vectors)
on a float feature matrix (see `irmodel.fuzz.recipes`)."""

from __future__ import annotations

from ._common import FLOAT, INT64, STRING, _emit, _i64

# -- ai.onnx.ml ---------------------------------------------------------------------------

def _features(b, n=3):
    return b.const(FLOAT, [2, n])


def linear_regressor(b):
    return _emit(b, "LinearRegressor", [_features(b)], ranks=(2,), coefficients=[0.5, 1.0, -1.0], intercepts=[0.1])


def linear_classifier(b):
    return _emit(b, "LinearClassifier", [_features(b)], 2, ranks=(1, 2), coefficients=[0.5, 1.0, -1.0, 1.0, 0.0, 2.0],
                 classlabels_ints=[0, 1])


def normalizer(b):
    return _emit(b, "Normalizer", [_features(b)], ranks=(2,), norm=b.rng.choice(("MAX", "L1", "L2")))


def scaler(b):
    return _emit(b, "Scaler", [_features(b)], ranks=(2,), offset=[0.5], scale=[2.0])


def binarizer(b):
    return _emit(b, "Binarizer", [_features(b)], threshold=1.0)


def imputer(b):
    return _emit(b, "Imputer", [_features(b)], ranks=(2,), imputed_value_floats=[0.0], replaced_value_float=1.0)


def array_feature_extractor(b):
    return _emit(b, "ArrayFeatureExtractor", [_features(b), _i64(b, [0, 2])])


def label_encoder(b):
    return _emit(b, "LabelEncoder", [b.const(INT64, [3], [1, 2, 5])], keys_int64s=[1, 2], values_strings=["a", "b"],
                 default_string="_")


def one_hot_encoder(b):
    return _emit(b, "OneHotEncoder", [b.const(INT64, [2], [1, 3])], cats_int64s=[1, 2, 3], zeros=1)


def category_mapper(b):
    return _emit(b, "CategoryMapper", [b.const(STRING, [2], [b"a", b"c"])], cats_strings=["a", "b"],
                 cats_int64s=[1, 2], default_int64=0)


def feature_vectorizer(b):
    return _emit(b, "FeatureVectorizer", [_features(b, 2), _features(b, 1)], ranks=(2,), inputdimensions=[2, 1])


def _tree_attributes():
    return dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
                nodes_values=[0.5, 0.0, 0.0], nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"],
                nodes_truenodeids=[1, 0, 0], nodes_falsenodeids=[2, 0, 0])


def tree_regressor(b):
    return _emit(b, "TreeEnsembleRegressor", [_features(b)], ranks=(2,), **_tree_attributes(), target_ids=[0, 0],
                 target_nodeids=[1, 2], target_treeids=[0, 0], target_weights=[1.0, 2.0], n_targets=1)


def tree_classifier(b):
    return _emit(b, "TreeEnsembleClassifier", [_features(b)], 2, ranks=(1, 2), **_tree_attributes(), class_ids=[0, 1],
                 class_nodeids=[1, 2], class_treeids=[0, 0], class_weights=[1.0, 1.0], classlabels_int64s=[0, 1])


def svm_regressor(b):
    return _emit(b, "SVMRegressor", [_features(b, 2)], ranks=(2,), coefficients=[1.0, -1.0],
                 support_vectors=[0.0, 1.0, 1.0, 0.0], kernel_params=[0.1, 0.0, 3.0],
                 n_supports=2, rho=[0.1], kernel_type="LINEAR")


def svm_classifier(b):
    return _emit(b, "SVMClassifier", [_features(b, 2)], 2, ranks=(1, 2), coefficients=[1.0, -1.0],
                 support_vectors=[0.0, 1.0, 1.0, 0.0], kernel_params=[0.1, 0.0, 3.0],
                 vectors_per_class=[1, 1], rho=[0.1], kernel_type="LINEAR", classlabels_ints=[0, 1])


RECIPES = {
    "LinearRegressor": linear_regressor,
    "LinearClassifier": linear_classifier,
    "Normalizer": normalizer,
    "Scaler": scaler,
    "Binarizer": binarizer,
    "Imputer": imputer,
    "ArrayFeatureExtractor": array_feature_extractor,
    "LabelEncoder": label_encoder,
    "OneHotEncoder": one_hot_encoder,
    "CategoryMapper": category_mapper,
    "FeatureVectorizer": feature_vectorizer,
    "TreeEnsembleRegressor": tree_regressor,
    "TreeEnsembleClassifier": tree_classifier,
    "SVMRegressor": svm_regressor,
    "SVMClassifier": svm_classifier,
}
