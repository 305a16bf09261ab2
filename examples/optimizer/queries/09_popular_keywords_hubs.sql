-- Popular keywords in movies with a hub person.
SELECT k.keyword, count(*)
FROM cast_info ci
JOIN title t ON t.id = ci.movie_id
JOIN movie_keyword mk ON mk.movie_id = t.id
JOIN keyword k ON k.id = mk.keyword_id
WHERE ci.person_id BETWEEN 1 AND 3 AND mk.keyword_id <= 5
GROUP BY k.keyword;
