

tf1_examplesserving_default%
#
!


age


tags

red