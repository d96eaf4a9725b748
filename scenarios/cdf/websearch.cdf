# Web-search flow sizes (DCTCP study), as used by the DCQCN and HPCC evaluations.
# size_bytes cumulative_percent; sample by linear interpolation.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
200000 60
1000000 70
2000000 80
5000000 90
10000000 97
30000000 100
