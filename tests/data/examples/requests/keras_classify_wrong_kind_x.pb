

keras_examplesclassify




x
