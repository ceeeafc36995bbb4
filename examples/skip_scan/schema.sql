-- Readings of four sensors, indexed by (sensor, taken): the usual index of a
-- time series, asked by time alone.
create table readings (sensor int not null, taken int not null, value float8 not null);
insert into readings select i % 4, i, random() from generate_series(1, 400000) i;
create index readings_sensor_taken on readings (sensor, taken);
