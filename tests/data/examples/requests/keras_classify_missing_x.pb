

keras_examplesclassify




age
