

tf1_examplespredict&
examplesB


age
