-- Actresses in Japanese anime series: role follows gender, keyword follows kind and country.
SELECT min(t.title), count(*)
FROM person p
JOIN cast_info ci ON ci.person_id = p.id
JOIN title t ON t.id = ci.movie_id
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN keyword k ON k.id = mk.keyword_id
JOIN movie_companies mc ON mc.movie_id = t.id
WHERE p.gender = 'f' AND ci.role = 'actress' AND k.keyword = 'anime' AND t.kind_id = 2
  AND mc.company_id BETWEEN 551 AND 700;
